//! Distances, diameter and average distance.
