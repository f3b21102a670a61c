//! How switches, ports and endpoints are numbered: the ids every other module uses.

/// Index of a switch.
pub type SwitchId = u32;
/// Index of a port within its switch.
pub type PortId = u16;
/// Index of an endpoint (NIC).
pub type EndpointId = u32;
