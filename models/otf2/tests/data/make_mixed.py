#!/usr/bin/python3
"""Writes tests/data/mixed/: a 4-rank MPI trace in OTF2, written by the OTF2 library's own
Python bindings (Debian: python3-otf2, 3.0.2; run with /usr/bin/python3), with the records
Score-P writes for MPI: blocking and non-blocking point-to-point, a sub-communicator whose
events give ranks in it, MPI_COMM_SELF, and collectives with Score-P's byte counts.

Timestamps are nanoseconds (timer resolution 1 GHz). Each rank computes COMPUTE[r] ns in
all between its MPI calls; tests/archives.rs checks the schedule against these numbers.
"""
import os
import shutil
import sys

import otf2
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm, RegionRole

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mixed")
ROOT_NONE = 0xFFFFFFFF


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    with otf2.writer.open(OUT, timer_resolution=1_000_000_000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node")
        procs = [d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                  system_tree_parent=node) for r in range(4)]
        locs = [d.location("Master thread", type=LocationType.CPU_THREAD, group=procs[r]) for r in range(4)]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                                                        paradigm=Paradigm.MPI, members=[0, 1, 2, 3]))
        self_comm = d.comm("MPI_COMM_SELF", group=d.group("", group_type=GroupType.COMM_SELF,
                                                           paradigm=Paradigm.MPI, members=[]))
        # Ranks 1 and 3 (MPI_Comm_split by odd rank): events give ranks in it (0 is 1, 1 is 3).
        odd = d.comm("odd", group=d.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                          members=[1, 3]), parent=world)

        def region(name, role):
            return d.region(name, region_role=role, paradigm=Paradigm.MPI)

        r_init = region("MPI_Init", RegionRole.FUNCTION)
        r_send = region("MPI_Send", RegionRole.POINT2POINT)
        r_recv = region("MPI_Recv", RegionRole.POINT2POINT)
        r_isend = region("MPI_Isend", RegionRole.POINT2POINT)
        r_irecv = region("MPI_Irecv", RegionRole.POINT2POINT)
        r_wait = region("MPI_Wait", RegionRole.POINT2POINT)
        r_allreduce = region("MPI_Allreduce", RegionRole.COLL_ALL2ALL)
        r_bcast = region("MPI_Bcast", RegionRole.COLL_ONE2ALL)
        r_barrier = region("MPI_Barrier", RegionRole.BARRIER)
        user = d.region("main", region_role=RegionRole.FUNCTION, paradigm=Paradigm.USER)
        w = [trace.event_writer_from_location(loc) for loc in locs]

        # MPI_Init on every rank, 0..100 ns; user code around it (not MPI: ignored).
        for r in range(4):
            w[r].enter(0, user)
            w[r].enter(0, r_init)
            w[r].mpi_collective_begin(1)
            w[r].mpi_collective_end(99, CollectiveOp.CREATE_HANDLE, world, ROOT_NONE, 0, 0)
            w[r].leave(100, r_init)
        # Rank 0 computes 1000 ns, then MPI_Send 1024 B, tag 7, to rank 1.
        w[0].enter(1100, r_send); w[0].mpi_send(1110, 1, world, 7, 1024); w[0].leave(1200, r_send)
        # Rank 1 computes 50 ns, then MPI_Recv from rank 0.
        w[1].enter(150, r_recv); w[1].mpi_recv(1300, 0, world, 7, 1024); w[1].leave(1310, r_recv)
        # Rank 2: MPI_Irecv (request 5) after 200 ns, 300 ns of work, MPI_Wait completes it:
        # the source (rank 3), tag and size appear only there.
        w[2].enter(300, r_irecv); w[2].mpi_irecv_request(305, 5); w[2].leave(310, r_irecv)
        w[2].enter(610, r_wait); w[2].mpi_irecv(900, 3, world, 9, 4096, 5); w[2].leave(905, r_wait)
        # Rank 3: MPI_Isend of 4096 B to rank 2 (request 11) after 400 ns, MPI_Wait at once.
        w[3].enter(500, r_isend); w[3].mpi_isend(505, 2, world, 9, 4096, 11); w[3].leave(510, r_isend)
        w[3].enter(510, r_wait); w[3].mpi_isend_complete(700, 11); w[3].leave(710, r_wait)
        # On "odd": its rank 0 (world 1) sends 100 B, tag 1, to its rank 1 (world 3), each
        # after 90 ns.
        w[1].enter(1400, r_send); w[1].mpi_send(1401, 1, odd, 1, 100); w[1].leave(1410, r_send)
        w[3].enter(800, r_recv); w[3].mpi_recv(1420, 0, odd, 1, 100); w[3].leave(1430, r_recv)
        # A self-message on MPI_COMM_SELF at rank 2 (its rank 0), after 95 ns.
        w[2].enter(1000, r_isend); w[2].mpi_isend(1001, 0, self_comm, 3, 16, 6); w[2].leave(1002, r_isend)
        w[2].enter(1002, r_recv); w[2].mpi_recv(1003, 0, self_comm, 3, 16); w[2].leave(1004, r_recv)
        w[2].enter(1004, r_wait); w[2].mpi_isend_complete(1005, 6); w[2].leave(1006, r_wait)
        # MPI_Allreduce of 8 B on the world after 500 ns: Score-P counts 4 blocks each way.
        ends = [1200, 1410, 1006, 1430]
        for r in range(4):
            t = ends[r] + 500
            w[r].enter(t, r_allreduce); w[r].mpi_collective_begin(t)
            w[r].mpi_collective_end(t + 300, CollectiveOp.ALLREDUCE, world, ROOT_NONE, 32, 32)
            w[r].leave(t + 310, r_allreduce)
            ends[r] = t + 310
        # MPI_Bcast of 64 B on "odd" from its rank 1 (world 3), after 10 ns: the root
        # counts 2 blocks sent.
        for r, (sent, received) in ((1, (0, 64)), (3, (128, 64))):
            t = ends[r] + 10
            w[r].enter(t, r_bcast); w[r].mpi_collective_begin(t)
            w[r].mpi_collective_end(t + 100, CollectiveOp.BCAST, odd, 1, sent, received)
            w[r].leave(t + 110, r_bcast)
            ends[r] = t + 110
        # MPI_Barrier on the world after 20 ns, then the end of main.
        for r in range(4):
            t = ends[r] + 20
            w[r].enter(t, r_barrier); w[r].mpi_collective_begin(t)
            w[r].mpi_collective_end(t + 50, CollectiveOp.BARRIER, world, ROOT_NONE, 0, 0)
            w[r].leave(t + 60, r_barrier)
            w[r].leave(t + 70, user)
    print("wrote", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
