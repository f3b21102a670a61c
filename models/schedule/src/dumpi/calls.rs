//! The MPI calls a DUMPI record holds: function ids (sst-dumpi's `enum dumpi_function`,
//! `dumpi/common/funclabels.h`) and the layout of each call's arguments
//! (`dumpi/common/dumpiio.c`). The calls a replay needs keep their arguments; the others
//! whose layout is known are read past and kept as [`CallKind::Other`].

use super::cursor::Cursor;
use super::DumpiError;

/// How a send completes (MPI's four modes; a replay treats them alike but for `Ssend`,
/// which cannot complete before its receive matches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    /// `MPI_Send`, `MPI_Isend`.
    Standard,
    /// `MPI_Bsend`, `MPI_Ibsend`.
    Buffered,
    /// `MPI_Ssend`, `MPI_Issend`.
    Synchronous,
    /// `MPI_Rsend`, `MPI_Irsend`.
    Ready,
}

/// An MPI call and the arguments a replay needs. Counts are in elements of the datatype
/// (DUMPI's datatype id; sizes in [`super::RankTrace::datatype_sizes`]); ranks are in the
/// call's communicator (DUMPI's communicator id: 2 is `MPI_COMM_WORLD`); `-1` is any source
/// or any tag; requests are DUMPI's request ids.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallKind {
    Init,
    Finalize,
    Send {
        mode: SendMode,
        count: i32,
        datatype: u16,
        dest: i32,
        tag: i32,
        comm: u16,
    },
    Recv {
        count: i32,
        datatype: u16,
        source: i32,
        tag: i32,
        comm: u16,
    },
    Isend {
        mode: SendMode,
        count: i32,
        datatype: u16,
        dest: i32,
        tag: i32,
        comm: u16,
        request: i32,
    },
    Irecv {
        count: i32,
        datatype: u16,
        source: i32,
        tag: i32,
        comm: u16,
        request: i32,
    },
    /// `MPI_Wait`.
    Wait {
        request: i32,
    },
    /// `MPI_Waitall`, and `MPI_Testall` when it returned true (`done`).
    Waitall {
        requests: Vec<i32>,
        done: bool,
    },
    /// `MPI_Waitany`, `MPI_Testany`: `index` of the request completed (-1: none).
    Waitany {
        requests: Vec<i32>,
        index: i32,
    },
    /// `MPI_Waitsome`, `MPI_Testsome`: the indices of the requests completed.
    Waitsome {
        requests: Vec<i32>,
        indices: Vec<i32>,
    },
    /// `MPI_Test`: whether the request completed.
    Test {
        request: i32,
        done: bool,
    },
    RequestFree {
        request: i32,
    },
    Sendrecv {
        sendcount: i32,
        sendtype: u16,
        dest: i32,
        sendtag: i32,
        recvcount: i32,
        recvtype: u16,
        source: i32,
        recvtag: i32,
        comm: u16,
    },
    Barrier {
        comm: u16,
    },
    Bcast {
        count: i32,
        datatype: u16,
        root: i32,
        comm: u16,
    },
    Reduce {
        count: i32,
        datatype: u16,
        root: i32,
        comm: u16,
    },
    Allreduce {
        count: i32,
        datatype: u16,
        comm: u16,
    },
    /// `MPI_Reduce_scatter`: the counts each rank receives.
    ReduceScatter {
        recvcounts: Vec<i32>,
        datatype: u16,
        comm: u16,
    },
    Allgather {
        sendcount: i32,
        sendtype: u16,
        comm: u16,
    },
    Allgatherv {
        sendcount: i32,
        sendtype: u16,
        recvcounts: Vec<i32>,
        recvtype: u16,
        comm: u16,
    },
    Alltoall {
        sendcount: i32,
        sendtype: u16,
        comm: u16,
    },
    Alltoallv {
        sendcounts: Vec<i32>,
        sendtype: u16,
        recvcounts: Vec<i32>,
        recvtype: u16,
        comm: u16,
    },
    Gather {
        sendcount: i32,
        sendtype: u16,
        root: i32,
        comm: u16,
    },
    Scatter {
        recvcount: i32,
        recvtype: u16,
        root: i32,
        comm: u16,
    },
    /// `MPI_Gatherv`: the root's receive counts (empty on the other ranks).
    Gatherv {
        sendcount: i32,
        sendtype: u16,
        root: i32,
        comm: u16,
        recvcounts: Vec<i32>,
        recvtype: u16,
    },
    /// `MPI_Scatterv`: the root's send counts (empty on the other ranks).
    Scatterv {
        recvcount: i32,
        recvtype: u16,
        root: i32,
        comm: u16,
        sendcounts: Vec<i32>,
        sendtype: u16,
    },
    CommSplit {
        comm: u16,
        color: i32,
        key: i32,
        new: u16,
    },
    CommDup {
        comm: u16,
        new: u16,
    },
    CommCreate {
        comm: u16,
        group: u16,
        new: u16,
    },
    CommGroup {
        comm: u16,
        group: u16,
    },
    GroupIncl {
        group: u16,
        ranks: Vec<i32>,
        new: u16,
    },
    CommFree {
        comm: u16,
    },
    /// A call read past: its DUMPI function id.
    Other {
        function: u16,
    },
}

/// The MPI name of DUMPI function `id`, for the functions this reader knows.
pub(super) fn name(id: u16) -> Option<&'static str> {
    Some(match id {
        0 => "MPI_Send",
        1 => "MPI_Recv",
        2 => "MPI_Get_count",
        3 => "MPI_Bsend",
        4 => "MPI_Ssend",
        5 => "MPI_Rsend",
        8 => "MPI_Isend",
        9 => "MPI_Ibsend",
        10 => "MPI_Issend",
        11 => "MPI_Irsend",
        12 => "MPI_Irecv",
        13 => "MPI_Wait",
        14 => "MPI_Test",
        15 => "MPI_Request_free",
        16 => "MPI_Waitany",
        17 => "MPI_Testany",
        18 => "MPI_Waitall",
        19 => "MPI_Testall",
        20 => "MPI_Waitsome",
        21 => "MPI_Testsome",
        22 => "MPI_Iprobe",
        23 => "MPI_Probe",
        33 => "MPI_Sendrecv",
        34 => "MPI_Sendrecv_replace",
        35 => "MPI_Type_contiguous",
        36 => "MPI_Type_vector",
        43 => "MPI_Type_size",
        46 => "MPI_Type_commit",
        47 => "MPI_Type_free",
        49 => "MPI_Pack",
        51 => "MPI_Pack_size",
        52 => "MPI_Barrier",
        53 => "MPI_Bcast",
        54 => "MPI_Gather",
        55 => "MPI_Gatherv",
        56 => "MPI_Scatter",
        57 => "MPI_Scatterv",
        58 => "MPI_Allgather",
        59 => "MPI_Allgatherv",
        60 => "MPI_Alltoall",
        61 => "MPI_Alltoallv",
        62 => "MPI_Reduce",
        63 => "MPI_Op_create",
        64 => "MPI_Op_free",
        65 => "MPI_Allreduce",
        66 => "MPI_Reduce_scatter",
        67 => "MPI_Scan",
        72 => "MPI_Comm_group",
        76 => "MPI_Group_incl",
        80 => "MPI_Group_free",
        81 => "MPI_Comm_size",
        82 => "MPI_Comm_rank",
        84 => "MPI_Comm_dup",
        85 => "MPI_Comm_create",
        86 => "MPI_Comm_split",
        87 => "MPI_Comm_free",
        96 => "MPI_Attr_get",
        122 => "MPI_Wtime",
        124 => "MPI_Init",
        125 => "MPI_Finalize",
        126 => "MPI_Initialized",
        _ => return None,
    })
}

/// Reads past a status array (`statuses`: the record says it holds them): a `u32` count
/// of 14-byte entries (bytes, source, cancelled, error, tag; 10 bytes before DUMPI 0.6.3).
fn skip_statuses(c: &mut Cursor<'_>, statuses: bool, version: [u8; 3]) -> Result<(), DumpiError> {
    if !statuses {
        return Ok(());
    }
    let n = u64::from(c.u32()?);
    let entry = if version >= [0, 6, 3] { 14 } else { 10 };
    c.skip(n * entry)
}

fn mode(id: u16) -> SendMode {
    match id {
        3 | 9 => SendMode::Buffered,
        4 | 10 => SendMode::Synchronous,
        5 | 11 => SendMode::Ready,
        _ => SendMode::Standard,
    }
}

/// Reads the arguments of a call of function `id`; `None` for a function whose layout this
/// reader does not know.
pub(super) fn read(
    c: &mut Cursor<'_>,
    id: u16,
    statuses: bool,
    version: [u8; 3],
) -> Result<Option<CallKind>, DumpiError> {
    use CallKind as K;
    let k = match id {
        0 | 3 | 4 | 5 => K::Send {
            mode: mode(id),
            count: c.i32()?,
            datatype: c.u16()?,
            dest: c.i32()?,
            tag: c.i32()?,
            comm: c.u16()?,
        },
        1 => {
            let k = K::Recv {
                count: c.i32()?,
                datatype: c.u16()?,
                source: c.i32()?,
                tag: c.i32()?,
                comm: c.u16()?,
            };
            skip_statuses(c, statuses, version)?;
            k
        }
        8..=11 => K::Isend {
            mode: mode(id),
            count: c.i32()?,
            datatype: c.u16()?,
            dest: c.i32()?,
            tag: c.i32()?,
            comm: c.u16()?,
            request: c.i32()?,
        },
        12 => K::Irecv {
            count: c.i32()?,
            datatype: c.u16()?,
            source: c.i32()?,
            tag: c.i32()?,
            comm: c.u16()?,
            request: c.i32()?,
        },
        13 => {
            let request = c.i32()?;
            skip_statuses(c, statuses, version)?;
            K::Wait { request }
        }
        14 => {
            let request = c.i32()?;
            let done = c.i32()? != 0;
            skip_statuses(c, statuses, version)?;
            K::Test { request, done }
        }
        15 => K::RequestFree { request: c.i32()? },
        16 | 17 => {
            c.i32()?;
            let requests = c.i32s()?;
            let index = c.i32()?;
            let done = if id == 17 { c.i32()? != 0 } else { true };
            skip_statuses(c, statuses, version)?;
            K::Waitany { requests, index: if done { index } else { -1 } }
        }
        18 | 19 => {
            c.i32()?;
            let requests = c.i32s()?;
            let done = if id == 19 { c.i32()? != 0 } else { true };
            skip_statuses(c, statuses, version)?;
            K::Waitall { requests, done }
        }
        20 | 21 => {
            c.i32()?;
            let requests = c.i32s()?;
            c.i32()?;
            let indices = c.i32s()?;
            skip_statuses(c, statuses, version)?;
            K::Waitsome { requests, indices }
        }
        22 | 23 => {
            c.skip(4 + 4 + 2)?; // source, tag, comm
            if id == 22 {
                c.i32()?; // flag
            }
            skip_statuses(c, statuses, version)?;
            K::Other { function: id }
        }
        2 => {
            skip_statuses(c, statuses, version)?;
            c.skip(2 + 4)?;
            K::Other { function: id }
        }
        33 => {
            let k = K::Sendrecv {
                sendcount: c.i32()?,
                sendtype: c.u16()?,
                dest: c.i32()?,
                sendtag: c.i32()?,
                recvcount: c.i32()?,
                recvtype: c.u16()?,
                source: c.i32()?,
                recvtag: c.i32()?,
                comm: c.u16()?,
            };
            skip_statuses(c, statuses, version)?;
            k
        }
        34 => {
            let (count, datatype, dest, sendtag, source, recvtag, comm) =
                (c.i32()?, c.u16()?, c.i32()?, c.i32()?, c.i32()?, c.i32()?, c.u16()?);
            skip_statuses(c, statuses, version)?;
            K::Sendrecv {
                sendcount: count,
                sendtype: datatype,
                dest,
                sendtag,
                recvcount: count,
                recvtype: datatype,
                source,
                recvtag,
                comm,
            }
        }
        52 => K::Barrier { comm: c.u16()? },
        53 => K::Bcast { count: c.i32()?, datatype: c.u16()?, root: c.i32()?, comm: c.u16()? },
        62 => {
            let (count, datatype) = (c.i32()?, c.u16()?);
            c.u8()?; // op
            K::Reduce { count, datatype, root: c.i32()?, comm: c.u16()? }
        }
        65 | 67 => {
            let (count, datatype) = (c.i32()?, c.u16()?);
            c.u8()?;
            let comm = c.u16()?;
            if id == 65 {
                K::Allreduce { count, datatype, comm }
            } else {
                K::Other { function: id }
            }
        }
        66 => {
            c.i32()?;
            let recvcounts = c.i32s()?;
            let datatype = c.u16()?;
            c.u8()?;
            K::ReduceScatter { recvcounts, datatype, comm: c.u16()? }
        }
        58 | 60 => {
            let (sendcount, sendtype) = (c.i32()?, c.u16()?);
            c.skip(4 + 2)?; // recvcount, recvtype
            let comm = c.u16()?;
            if id == 58 {
                K::Allgather { sendcount, sendtype, comm }
            } else {
                K::Alltoall { sendcount, sendtype, comm }
            }
        }
        59 => {
            c.i32()?;
            let (sendcount, sendtype) = (c.i32()?, c.u16()?);
            let recvcounts = c.i32s()?;
            c.i32s()?; // displacements
            K::Allgatherv { sendcount, sendtype, recvcounts, recvtype: c.u16()?, comm: c.u16()? }
        }
        61 => {
            c.i32()?;
            let sendcounts = c.i32s()?;
            c.i32s()?;
            let sendtype = c.u16()?;
            let recvcounts = c.i32s()?;
            c.i32s()?;
            K::Alltoallv { sendcounts, sendtype, recvcounts, recvtype: c.u16()?, comm: c.u16()? }
        }
        54 => {
            let commrank = c.i32()?;
            let (sendcount, sendtype, root, comm) = (c.i32()?, c.u16()?, c.i32()?, c.u16()?);
            if commrank == root {
                c.skip(4 + 2)?;
            }
            K::Gather { sendcount, sendtype, root, comm }
        }
        56 => {
            let commrank = c.i32()?;
            let (recvcount, recvtype, root, comm) = (c.i32()?, c.u16()?, c.i32()?, c.u16()?);
            if commrank == root {
                c.skip(4 + 2)?;
            }
            K::Scatter { recvcount, recvtype, root, comm }
        }
        55 => {
            let commrank = c.i32()?;
            c.i32()?;
            let (sendcount, sendtype, root, comm) = (c.i32()?, c.u16()?, c.i32()?, c.u16()?);
            let recvcounts = if commrank == root {
                let counts = c.i32s()?;
                c.i32s()?;
                counts
            } else {
                Vec::new()
            };
            K::Gatherv { sendcount, sendtype, root, comm, recvcounts, recvtype: c.u16()? }
        }
        57 => {
            let commrank = c.i32()?;
            c.i32()?;
            let sendtype = c.u16()?;
            let (recvcount, recvtype, root, comm) = (c.i32()?, c.u16()?, c.i32()?, c.u16()?);
            let sendcounts = if commrank == root {
                let counts = c.i32s()?;
                c.i32s()?;
                counts
            } else {
                Vec::new()
            };
            K::Scatterv { recvcount, recvtype, root, comm, sendcounts, sendtype }
        }
        72 => K::CommGroup { comm: c.u16()?, group: c.u16()? },
        76 => {
            let group = c.u16()?;
            c.i32()?;
            K::GroupIncl { group, ranks: c.i32s()?, new: c.u16()? }
        }
        84 => K::CommDup { comm: c.u16()?, new: c.u16()? },
        85 => K::CommCreate { comm: c.u16()?, group: c.u16()?, new: c.u16()? },
        86 => K::CommSplit { comm: c.u16()?, color: c.i32()?, key: c.i32()?, new: c.u16()? },
        87 => K::CommFree { comm: c.u16()? },
        124 => {
            let argc = c.u32()?;
            if version < [0, 6, 2] {
                c.u32()?;
            }
            for _ in 0..argc {
                c.skip_bytes()?;
            }
            K::Init
        }
        125 => K::Finalize,
        // Read past: Type_size, Comm_size, Comm_rank, Group_free, Type_commit/free,
        // Type_contiguous, Type_vector, Pack, Pack_size, Op_create/free, Attr_get, Wtime,
        // Initialized.
        43 | 81 | 82 => {
            c.skip(2 + 4)?;
            K::Other { function: id }
        }
        80 | 46 | 47 => {
            c.skip(2)?;
            K::Other { function: id }
        }
        35 => {
            c.skip(4 + 2 + 2)?;
            K::Other { function: id }
        }
        36 => {
            c.skip(12 + 2 + 2)?;
            K::Other { function: id }
        }
        49 => {
            c.skip(4 + 2 + 12 + 2)?;
            K::Other { function: id }
        }
        51 => {
            c.skip(4 + 2 + 2 + 4)?;
            K::Other { function: id }
        }
        63 => {
            c.skip(4 + 1)?;
            K::Other { function: id }
        }
        64 => {
            c.skip(1)?;
            K::Other { function: id }
        }
        96 => {
            c.skip(2 + 4 + 4)?;
            K::Other { function: id }
        }
        122 => K::Other { function: id },
        126 => {
            c.skip(4)?;
            K::Other { function: id }
        }
        _ => return Ok(None),
    };
    Ok(Some(k))
}
