/*
 * otf2-pmpi.c -- a small PMPI tracing library that writes an OTF2 archive
 *                in the record conventions of Score-P's MPI adapter.
 *
 * Purpose: produce OTF2 traces of real MPI applications (e.g. LULESH) for
 * xnet's OTF2 reader, on systems where Score-P is not available.
 *
 * Build (shared library):
 *   mpicc -shared -fPIC -O2 -Wall -o libotf2pmpi.so otf2-pmpi.c \
 *         $(pkg-config --cflags --libs otf2)
 *
 * Use: link it ahead of the MPI library, e.g.
 *   mpicxx app.o -L/path -Wl,-rpath,/path -lotf2pmpi -o app
 * (or LD_PRELOAD=/path/libotf2pmpi.so). The archive directory is taken from
 * the environment variable OTF2_PMPI_ARCHIVE_DIR (default "otf2-trace"); the
 * archive name is "traces" (traces.otf2, traces.def, traces/<rank>.evt|.def).
 * The directory must not already contain an archive.
 *
 * What is recorded (one OTF2 location per MPI rank, location id = rank):
 *   - every wrapped MPI call: Enter(region) ... Leave(region); each MPI
 *     function is a Region with paradigm MPI and a Score-P-like role.
 *   - MPI_Send:  MpiSend(dest, comm, tag, bytes) right after Enter
 *                (before PMPI_Send, like Score-P).
 *   - MPI_Recv:  MpiRecv(source, comm, tag, bytes) from the status, before Leave.
 *   - MPI_Isend: MpiIsend(dest, comm, tag, bytes, reqID) after Enter; the
 *                completing Wait/Waitall/Test call writes MpiIsendComplete(reqID).
 *   - MPI_Irecv: MpiIrecvRequest(reqID) after PMPI_Irecv; the completing
 *                Wait/Waitall/Test call writes MpiIrecv(source, comm, tag, bytes, reqID)
 *                from the status.
 *   - collectives: MpiCollectiveBegin after Enter, MpiCollectiveEnd(op, comm,
 *                root, sizeSent, sizeReceived) before Leave, with Score-P's
 *                byte accounting (see the individual wrappers).
 *   - MPI_Init/Init_thread/Finalize/Comm_size/Comm_rank/Wtime: Enter/Leave only.
 *   Messages to/from MPI_PROC_NULL produce no message records (like Score-P).
 *
 * Request IDs: a per-rank counter starting at 1. Outstanding requests are
 * kept in a small table keyed by (address of the caller's MPI_Request
 * variable, handle value). The address is needed because MPICH returns the
 * same handle value for several requests that completed immediately (e.g.
 * small sends), so the handle value alone is ambiguous. If no entry matches
 * the address (the application copied the handle elsewhere), the oldest
 * entry with the same handle value is taken (FIFO per handle value).
 *
 * Definitions: rank 0 writes all global definitions at MPI_Finalize after
 * gathering every rank's event count (Location.numberOfEvents), the global
 * min start / max end time (ClockProperties) and whether MPI_COMM_SELF was
 * used. Only MPI_COMM_WORLD (comm ref 0) and MPI_COMM_SELF (comm ref 1) are
 * supported; any other communicator aborts the run with a clear message.
 *
 * Timer: clock_gettime(CLOCK_MONOTONIC) in nanoseconds (resolution 1e9).
 *
 * Limitations: single-threaded use only; persistent requests, MPI_Request_free,
 * MPI_Cancel, Testany/Testsome and all calls not wrapped here are not traced
 * (a request completed by an unwrapped call never gets its completion record;
 * the number of such leftovers is reported on stderr at finalize).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <otf2/otf2.h>
/* Let OTF2's MPI collective callbacks call PMPI_*, so they are not traced. */
#define OTF2_MPI_USE_PMPI
#include <otf2/OTF2_MPI_Collectives.h>

/* ------------------------------------------------------------------------ */
/* Regions: X(enum id, name, OTF2 region role)                               */
/* ------------------------------------------------------------------------ */
#define REGION_LIST(X)                                   \
    X(R_INIT,        "MPI_Init",        FUNCTION)        \
    X(R_INIT_THREAD, "MPI_Init_thread", FUNCTION)        \
    X(R_FINALIZE,    "MPI_Finalize",    FUNCTION)        \
    X(R_COMM_SIZE,   "MPI_Comm_size",   FUNCTION)        \
    X(R_COMM_RANK,   "MPI_Comm_rank",   FUNCTION)        \
    X(R_WTIME,       "MPI_Wtime",       FUNCTION)        \
    X(R_SEND,        "MPI_Send",        POINT2POINT)     \
    X(R_RECV,        "MPI_Recv",        POINT2POINT)     \
    X(R_ISEND,       "MPI_Isend",       POINT2POINT)     \
    X(R_IRECV,       "MPI_Irecv",       POINT2POINT)     \
    X(R_WAIT,        "MPI_Wait",        POINT2POINT)     \
    X(R_WAITALL,     "MPI_Waitall",     POINT2POINT)     \
    X(R_WAITANY,     "MPI_Waitany",     POINT2POINT)     \
    X(R_WAITSOME,    "MPI_Waitsome",    POINT2POINT)     \
    X(R_TEST,        "MPI_Test",        POINT2POINT)     \
    X(R_TESTALL,     "MPI_Testall",     POINT2POINT)     \
    X(R_BARRIER,     "MPI_Barrier",     BARRIER)         \
    X(R_BCAST,       "MPI_Bcast",       COLL_ONE2ALL)    \
    X(R_REDUCE,      "MPI_Reduce",      COLL_ALL2ONE)    \
    X(R_ALLREDUCE,   "MPI_Allreduce",   COLL_ALL2ALL)    \
    X(R_ALLGATHER,   "MPI_Allgather",   COLL_ALL2ALL)    \
    X(R_ALLTOALL,    "MPI_Alltoall",    COLL_ALL2ALL)

#define X_ENUM(id, name, role) id,
enum { REGION_LIST(X_ENUM) N_REGIONS };
#define X_NAME(id, name, role) name,
static const char* const region_names[N_REGIONS] = { REGION_LIST(X_NAME) };
#define X_ROLE(id, name, role) OTF2_REGION_ROLE_##role,
static const OTF2_RegionRole region_roles[N_REGIONS] = { REGION_LIST(X_ROLE) };

/* Communicator / group definition ids (Score-P-like layout). */
enum { COMM_WORLD_REF = 0, COMM_SELF_REF = 1 };
enum { GROUP_LOCATIONS = 0, GROUP_WORLD = 1, GROUP_SELF = 2 };

/* ------------------------------------------------------------------------ */
/* Global tracer state (one process = one rank = one location).             */
/* ------------------------------------------------------------------------ */
static int             tracing = 0;   /* 1 between archive open and finalize */
static OTF2_Archive*   archive = NULL;
static OTF2_EvtWriter* evt     = NULL;
static int             my_rank, world_size;
static uint64_t        t_start, t_end;      /* local first/last timestamp */
static int64_t         realtime_offset;     /* CLOCK_REALTIME - CLOCK_MONOTONIC */
static int             used_comm_self = 0;

static inline uint64_t
now( void )
{
    struct timespec ts;
    clock_gettime( CLOCK_MONOTONIC, &ts );
    return ( uint64_t )ts.tv_sec * 1000000000u + ( uint64_t )ts.tv_nsec;
}

static void
check( OTF2_ErrorCode e, const char* what )
{
    if ( e != OTF2_SUCCESS )
    {
        fprintf( stderr, "otf2-pmpi[rank %d]: %s failed: %s\n", my_rank, what,
                 OTF2_Error_GetName( e ) );
    }
}

#define ENTER( r ) do { if ( tracing ) check( OTF2_EvtWriter_Enter( evt, NULL, now(), r ), "Enter" ); } while ( 0 )
#define LEAVE( r ) do { if ( tracing ) check( OTF2_EvtWriter_Leave( evt, NULL, now(), r ), "Leave" ); } while ( 0 )
#define COLL_BEGIN() do { if ( tracing ) check( OTF2_EvtWriter_MpiCollectiveBegin( evt, NULL, now() ), "CollBegin" ); } while ( 0 )

/* Map a communicator to its OTF2 comm ref; abort on unsupported ones. */
static uint32_t
comm_ref( MPI_Comm comm, const char* fn )
{
    if ( comm == MPI_COMM_WORLD )
    {
        return COMM_WORLD_REF;
    }
    if ( comm == MPI_COMM_SELF )
    {
        used_comm_self = 1;
        return COMM_SELF_REF;
    }
    fprintf( stderr, "otf2-pmpi[rank %d]: %s called on a communicator other than "
             "MPI_COMM_WORLD/MPI_COMM_SELF; this tracer does not support that. Aborting.\n",
             my_rank, fn );
    PMPI_Abort( MPI_COMM_WORLD, 99 );
    return 0;
}

static int
comm_size( MPI_Comm comm )
{
    if ( comm == MPI_COMM_WORLD )
    {
        return world_size;
    }
    int n;
    PMPI_Comm_size( comm, &n );
    return n;
}

static uint64_t
msg_bytes( int count, MPI_Datatype dt )
{
    int sz = 0;
    PMPI_Type_size( dt, &sz );
    return ( uint64_t )count * ( uint64_t )sz;
}

static uint64_t
status_bytes( const MPI_Status* st )
{
    int n = 0;
    PMPI_Get_count( st, MPI_BYTE, &n );
    return n == MPI_UNDEFINED ? 0 : ( uint64_t )n;
}

/* ------------------------------------------------------------------------ */
/* Request table                                                             */
/* ------------------------------------------------------------------------ */
typedef struct
{
    MPI_Request* addr;     /* address of the caller's MPI_Request variable */
    MPI_Request  handle;   /* handle value returned by PMPI_Isend/Irecv */
    uint64_t     id;       /* OTF2 request id */
    uint32_t     comm;     /* comm ref (for the MpiIrecv record) */
    int          is_recv;
} req_entry;

static req_entry* req_tab   = NULL;
static size_t     req_count = 0, req_cap = 0;
static uint64_t   next_req_id = 1;
/* Statistics, printed at finalize when OTF2_PMPI_VERBOSE is set. */
static uint64_t   n_match_addr = 0, n_match_handle = 0, n_dup_handle = 0;

static void
req_add( MPI_Request* addr, MPI_Request handle, uint64_t id, uint32_t comm, int is_recv )
{
    if ( req_count == req_cap )
    {
        req_cap = req_cap ? 2 * req_cap : 64;
        req_tab = realloc( req_tab, req_cap * sizeof( *req_tab ) );
        if ( !req_tab )
        {
            fprintf( stderr, "otf2-pmpi: out of memory\n" );
            PMPI_Abort( MPI_COMM_WORLD, 98 );
        }
    }
    for ( size_t i = 0; i < req_count; i++ )
    {
        if ( req_tab[ i ].handle == handle )
        {
            n_dup_handle++;   /* same handle value as another outstanding request */
            break;
        }
    }
    req_tab[ req_count++ ] = ( req_entry ){ addr, handle, id, comm, is_recv };
}

/* Find the entry for (addr, handle): exact match first, else the oldest entry
 * with the same handle value. Returns index or -1. */
static long
req_find( MPI_Request* addr, MPI_Request handle )
{
    long best = -1;
    for ( size_t i = 0; i < req_count; i++ )
    {
        if ( req_tab[ i ].addr == addr && req_tab[ i ].handle == handle &&
             ( best < 0 || req_tab[ i ].id < req_tab[ best ].id ) )
        {
            best = ( long )i;
        }
    }
    if ( best >= 0 )
    {
        n_match_addr++;
        return best;
    }
    for ( size_t i = 0; i < req_count; i++ )
    {
        if ( req_tab[ i ].handle == handle &&
             ( best < 0 || req_tab[ i ].id < req_tab[ best ].id ) )
        {
            best = ( long )i;
        }
    }
    if ( best >= 0 )
    {
        n_match_handle++;
    }
    return best;
}

/* A request that was stored in *addr with value `handle` before the
 * completion call has completed with status *st: write its completion record
 * and drop it from the table. Untracked requests are ignored. */
static void
req_complete( MPI_Request* addr, MPI_Request handle, const MPI_Status* st )
{
    if ( !tracing || handle == MPI_REQUEST_NULL )
    {
        return;
    }
    long i = req_find( addr, handle );
    if ( i < 0 )
    {
        return;
    }
    req_entry e = req_tab[ i ];
    req_tab[ i ] = req_tab[ --req_count ];
    if ( !e.is_recv )
    {
        check( OTF2_EvtWriter_MpiIsendComplete( evt, NULL, now(), e.id ), "MpiIsendComplete" );
    }
    else
    {
        int cancelled = 0;
        PMPI_Test_cancelled( st, &cancelled );
        if ( cancelled )
        {
            check( OTF2_EvtWriter_MpiRequestCancelled( evt, NULL, now(), e.id ), "MpiRequestCancelled" );
        }
        else
        {
            check( OTF2_EvtWriter_MpiIrecv( evt, NULL, now(), ( uint32_t )st->MPI_SOURCE, e.comm,
                                            ( uint32_t )st->MPI_TAG, status_bytes( st ), e.id ),
                   "MpiIrecv" );
        }
    }
}

/* Scratch arrays for the multi-request completion calls. */
#define SMALL_N 64
typedef struct
{
    MPI_Request  req_small[ SMALL_N ];
    MPI_Status   st_small[ SMALL_N ];
    MPI_Request* saved;  /* copy of the handles before the call */
    MPI_Status*  st;     /* statuses actually passed to PMPI */
} scratch;

static void
scratch_init( scratch* s, int count, const MPI_Request reqs[], MPI_Status* user_st )
{
    s->saved = count <= SMALL_N ? s->req_small : malloc( count * sizeof( MPI_Request ) );
    memcpy( s->saved, reqs, count * sizeof( MPI_Request ) );
    if ( user_st == MPI_STATUSES_IGNORE )
    {
        s->st = count <= SMALL_N ? s->st_small : malloc( count * sizeof( MPI_Status ) );
    }
    else
    {
        s->st = user_st;
    }
}

static void
scratch_free( scratch* s, MPI_Status* user_st )
{
    if ( s->saved != s->req_small )
    {
        free( s->saved );
    }
    if ( user_st == MPI_STATUSES_IGNORE && s->st != s->st_small )
    {
        free( s->st );
    }
}

/* ------------------------------------------------------------------------ */
/* Archive setup / teardown                                                  */
/* ------------------------------------------------------------------------ */
static OTF2_FlushType
pre_flush( void* userData, OTF2_FileType fileType, OTF2_LocationRef location,
           void* callerData, bool final )
{
    return OTF2_FLUSH;
}

static OTF2_TimeStamp
post_flush( void* userData, OTF2_FileType fileType, OTF2_LocationRef location )
{
    return now();
}

static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush,
                                               .otf2_post_flush = post_flush };

static void
setup_failed( const char* what, const char* dir )
{
    fprintf( stderr, "otf2-pmpi[rank %d]: %s failed for archive directory %s. Aborting.\n",
             my_rank, what, dir );
    PMPI_Abort( MPI_COMM_WORLD, 96 );
}

/* Called right after PMPI_Init*; t0 is the timestamp taken before it. */
static void
trace_open( int region, uint64_t t0 )
{
    PMPI_Comm_rank( MPI_COMM_WORLD, &my_rank );
    PMPI_Comm_size( MPI_COMM_WORLD, &world_size );

    const char* dir = getenv( "OTF2_PMPI_ARCHIVE_DIR" );
    if ( !dir || !*dir )
    {
        dir = "otf2-trace";
    }
    /* OTF2 refuses to write into an existing archive (and then fails later in
     * unhelpful ways), so check first. Setup failures abort the run: an
     * untraced run is of no use to whoever asked for a trace. */
    char path[ 4096 ];
    snprintf( path, sizeof( path ), "%s/traces", dir );
    /* Rank 0 checks and tells the others (OTF2 creates the directory on rank 0
     * during the collective setup, so a per-rank check would race). */
    int exists = my_rank == 0 && access( path, F_OK ) == 0;
    PMPI_Bcast( &exists, 1, MPI_INT, 0, MPI_COMM_WORLD );
    if ( exists )
    {
        fprintf( stderr, "otf2-pmpi[rank %d]: %s already exists; remove the old archive "
                 "in %s or set OTF2_PMPI_ARCHIVE_DIR elsewhere. Aborting.\n", my_rank, path, dir );
        PMPI_Abort( MPI_COMM_WORLD, 97 );
    }
    archive = OTF2_Archive_Open( dir, "traces", OTF2_FILEMODE_WRITE,
                                 1024 * 1024 /* event chunk */, 4 * 1024 * 1024 /* def chunk */,
                                 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE );
    if ( !archive )
    {
        setup_failed( "OTF2_Archive_Open", dir );
    }
    if ( OTF2_Archive_SetFlushCallbacks( archive, &flush_callbacks, NULL ) != OTF2_SUCCESS )
    {
        setup_failed( "OTF2_Archive_SetFlushCallbacks", dir );
    }
    if ( OTF2_MPI_Archive_SetCollectiveCallbacks( archive, MPI_COMM_WORLD, MPI_COMM_NULL ) != OTF2_SUCCESS )
    {
        setup_failed( "OTF2_MPI_Archive_SetCollectiveCallbacks", dir );
    }
    if ( OTF2_Archive_OpenEvtFiles( archive ) != OTF2_SUCCESS )
    {
        setup_failed( "OTF2_Archive_OpenEvtFiles", dir );
    }
    evt = OTF2_Archive_GetEvtWriter( archive, ( OTF2_LocationRef )my_rank );
    if ( !evt )
    {
        setup_failed( "OTF2_Archive_GetEvtWriter", dir );
    }

    struct timespec rt;
    clock_gettime( CLOCK_REALTIME, &rt );
    uint64_t mono = now();
    realtime_offset = ( int64_t )( ( uint64_t )rt.tv_sec * 1000000000u + rt.tv_nsec ) - ( int64_t )mono;

    t_start = t0;
    tracing = 1;
    check( OTF2_EvtWriter_Enter( evt, NULL, t0, region ), "Enter" );
}

static void
write_global_defs( const uint64_t* nevents, uint64_t gmin, uint64_t gmax, int any_self )
{
    OTF2_GlobalDefWriter* gw = OTF2_Archive_GetGlobalDefWriter( archive );
    if ( !gw )
    {
        fprintf( stderr, "otf2-pmpi: GetGlobalDefWriter failed\n" );
        return;
    }
    check( OTF2_GlobalDefWriter_WriteClockProperties( gw, 1000000000u, gmin, gmax - gmin,
                                                      ( uint64_t )( ( int64_t )gmin + realtime_offset ) ),
           "WriteClockProperties" );

    /* Strings */
    enum { S_EMPTY, S_MPI, S_MASTER, S_WORLD, S_SELF, S_HOST, S_NODE, S_REGIONS };
    char host[ 256 ] = "localhost";
    gethostname( host, sizeof( host ) - 1 );
    check( OTF2_GlobalDefWriter_WriteString( gw, S_EMPTY, "" ), "WriteString" );
    check( OTF2_GlobalDefWriter_WriteString( gw, S_MPI, "MPI" ), "WriteString" );
    check( OTF2_GlobalDefWriter_WriteString( gw, S_MASTER, "Master thread" ), "WriteString" );
    check( OTF2_GlobalDefWriter_WriteString( gw, S_WORLD, "MPI_COMM_WORLD" ), "WriteString" );
    check( OTF2_GlobalDefWriter_WriteString( gw, S_SELF, "MPI_COMM_SELF" ), "WriteString" );
    check( OTF2_GlobalDefWriter_WriteString( gw, S_HOST, host ), "WriteString" );
    check( OTF2_GlobalDefWriter_WriteString( gw, S_NODE, "node" ), "WriteString" );
    for ( int r = 0; r < N_REGIONS; r++ )
    {
        check( OTF2_GlobalDefWriter_WriteString( gw, S_REGIONS + r, region_names[ r ] ), "WriteString" );
    }
    const uint32_t s_ranks = S_REGIONS + N_REGIONS;
    for ( int r = 0; r < world_size; r++ )
    {
        char name[ 32 ];
        snprintf( name, sizeof( name ), "MPI Rank %d", r );
        check( OTF2_GlobalDefWriter_WriteString( gw, s_ranks + r, name ), "WriteString" );
    }

    /* Regions: name and canonical name "MPI_X", source file "MPI". */
    for ( int r = 0; r < N_REGIONS; r++ )
    {
        check( OTF2_GlobalDefWriter_WriteRegion( gw, r, S_REGIONS + r, S_REGIONS + r, S_EMPTY,
                                                 region_roles[ r ], OTF2_PARADIGM_MPI,
                                                 OTF2_REGION_FLAG_NONE, S_MPI, 0, 0 ),
               "WriteRegion" );
    }

    /* System tree: a single node. */
    check( OTF2_GlobalDefWriter_WriteSystemTreeNode( gw, 0, S_HOST, S_NODE,
                                                     OTF2_UNDEFINED_SYSTEM_TREE_NODE ),
           "WriteSystemTreeNode" );

    /* One process location group and one thread location per rank. */
    for ( int r = 0; r < world_size; r++ )
    {
        check( OTF2_GlobalDefWriter_WriteLocationGroup( gw, r, s_ranks + r,
                                                        OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                        OTF2_UNDEFINED_LOCATION_GROUP ),
               "WriteLocationGroup" );
        check( OTF2_GlobalDefWriter_WriteLocation( gw, r, S_MASTER, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                   nevents[ r ], r ),
               "WriteLocation" );
    }

    /* Groups and communicators. */
    uint64_t* members = malloc( world_size * sizeof( uint64_t ) );
    for ( int r = 0; r < world_size; r++ )
    {
        members[ r ] = ( uint64_t )r;
    }
    check( OTF2_GlobalDefWriter_WriteGroup( gw, GROUP_LOCATIONS, S_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, world_size, members ),
           "WriteGroup(locations)" );
    check( OTF2_GlobalDefWriter_WriteGroup( gw, GROUP_WORLD, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, world_size, members ),
           "WriteGroup(world)" );
    if ( any_self )
    {
        check( OTF2_GlobalDefWriter_WriteGroup( gw, GROUP_SELF, S_EMPTY, OTF2_GROUP_TYPE_COMM_SELF,
                                                OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, NULL ),
               "WriteGroup(self)" );
    }
    free( members );
    check( OTF2_GlobalDefWriter_WriteComm( gw, COMM_WORLD_REF, S_WORLD, GROUP_WORLD,
                                           OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE ),
           "WriteComm(world)" );
    if ( any_self )
    {
        check( OTF2_GlobalDefWriter_WriteComm( gw, COMM_SELF_REF, S_SELF, GROUP_SELF,
                                               OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE ),
               "WriteComm(self)" );
    }
    check( OTF2_Archive_CloseGlobalDefWriter( archive, gw ), "CloseGlobalDefWriter" );
}

/* Called inside MPI_Finalize, before PMPI_Finalize. */
static void
trace_close( void )
{
    t_end = now();
    check( OTF2_EvtWriter_Leave( evt, NULL, t_end, R_FINALIZE ), "Leave" );
    tracing = 0;

    if ( req_count > 0 )
    {
        fprintf( stderr, "otf2-pmpi[rank %d]: warning: %zu request(s) never completed in a "
                 "wrapped call; they have no completion record\n", my_rank, req_count );
    }

    const char* verbose = getenv( "OTF2_PMPI_VERBOSE" );
    if ( verbose && *verbose && strcmp( verbose, "0" ) != 0 )
    {
        fprintf( stderr, "otf2-pmpi[rank %d]: %llu request ids; completions matched by address %llu, "
                 "by handle value only %llu; requests created with a handle value already "
                 "outstanding: %llu\n", my_rank, ( unsigned long long )( next_req_id - 1 ),
                 ( unsigned long long )n_match_addr, ( unsigned long long )n_match_handle,
                 ( unsigned long long )n_dup_handle );
    }

    uint64_t nev = 0;
    check( OTF2_EvtWriter_GetNumberOfEvents( evt, &nev ), "GetNumberOfEvents" );
    check( OTF2_Archive_CloseEvtWriter( archive, evt ), "CloseEvtWriter" );
    check( OTF2_Archive_CloseEvtFiles( archive ), "CloseEvtFiles" );

    /* Local definitions are empty, but write the file so traces/<rank>.def exists. */
    check( OTF2_Archive_OpenDefFiles( archive ), "OpenDefFiles" );
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter( archive, ( OTF2_LocationRef )my_rank );
    check( OTF2_Archive_CloseDefWriter( archive, dw ), "CloseDefWriter" );
    check( OTF2_Archive_CloseDefFiles( archive ), "CloseDefFiles" );

    uint64_t* all = my_rank == 0 ? malloc( world_size * sizeof( uint64_t ) ) : NULL;
    uint64_t  gmin = 0, gmax = 0;
    int       any_self = 0;
    PMPI_Gather( &nev, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD );
    PMPI_Reduce( &t_start, &gmin, 1, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD );
    PMPI_Reduce( &t_end, &gmax, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD );
    PMPI_Reduce( &used_comm_self, &any_self, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD );

    if ( my_rank == 0 )
    {
        write_global_defs( all, gmin, gmax, any_self );
        free( all );
    }
    PMPI_Barrier( MPI_COMM_WORLD );
    check( OTF2_Archive_Close( archive ), "Archive_Close" );
    archive = NULL;
    evt     = NULL;
}

/* ------------------------------------------------------------------------ */
/* Environment                                                               */
/* ------------------------------------------------------------------------ */
int
MPI_Init( int* argc, char*** argv )
{
    uint64_t t0 = now();
    int      r  = PMPI_Init( argc, argv );
    trace_open( R_INIT, t0 );
    LEAVE( R_INIT );
    return r;
}

int
MPI_Init_thread( int* argc, char*** argv, int required, int* provided )
{
    uint64_t t0 = now();
    int      r  = PMPI_Init_thread( argc, argv, required, provided );
    trace_open( R_INIT_THREAD, t0 );
    LEAVE( R_INIT_THREAD );
    return r;
}

int
MPI_Finalize( void )
{
    ENTER( R_FINALIZE );
    if ( tracing )
    {
        trace_close();   /* writes Leave(MPI_Finalize) and the archive */
    }
    return PMPI_Finalize();
}

int
MPI_Comm_size( MPI_Comm comm, int* size )
{
    ENTER( R_COMM_SIZE );
    int r = PMPI_Comm_size( comm, size );
    LEAVE( R_COMM_SIZE );
    return r;
}

int
MPI_Comm_rank( MPI_Comm comm, int* rank )
{
    ENTER( R_COMM_RANK );
    int r = PMPI_Comm_rank( comm, rank );
    LEAVE( R_COMM_RANK );
    return r;
}

double
MPI_Wtime( void )
{
    ENTER( R_WTIME );
    double r = PMPI_Wtime();
    LEAVE( R_WTIME );
    return r;
}

/* ------------------------------------------------------------------------ */
/* Point-to-point                                                            */
/* ------------------------------------------------------------------------ */
int
MPI_Send( const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm )
{
    ENTER( R_SEND );
    if ( tracing && dest != MPI_PROC_NULL )
    {
        check( OTF2_EvtWriter_MpiSend( evt, NULL, now(), ( uint32_t )dest, comm_ref( comm, "MPI_Send" ),
                                       ( uint32_t )tag, msg_bytes( count, dt ) ),
               "MpiSend" );
    }
    int r = PMPI_Send( buf, count, dt, dest, tag, comm );
    LEAVE( R_SEND );
    return r;
}

int
MPI_Recv( void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status* status )
{
    MPI_Status  local;
    MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
    ENTER( R_RECV );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Recv" ) : 0;
    int      r    = PMPI_Recv( buf, count, dt, source, tag, comm, st );
    if ( tracing && source != MPI_PROC_NULL && r == MPI_SUCCESS )
    {
        check( OTF2_EvtWriter_MpiRecv( evt, NULL, now(), ( uint32_t )st->MPI_SOURCE, cref,
                                       ( uint32_t )st->MPI_TAG, status_bytes( st ) ),
               "MpiRecv" );
    }
    LEAVE( R_RECV );
    return r;
}

int
MPI_Isend( const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
           MPI_Request* request )
{
    ENTER( R_ISEND );
    uint64_t id   = 0;
    uint32_t cref = 0;
    if ( tracing && dest != MPI_PROC_NULL )
    {
        cref = comm_ref( comm, "MPI_Isend" );
        id   = next_req_id++;
        check( OTF2_EvtWriter_MpiIsend( evt, NULL, now(), ( uint32_t )dest, cref, ( uint32_t )tag,
                                        msg_bytes( count, dt ), id ),
               "MpiIsend" );
    }
    int r = PMPI_Isend( buf, count, dt, dest, tag, comm, request );
    if ( id && r == MPI_SUCCESS )
    {
        req_add( request, *request, id, cref, 0 );
    }
    LEAVE( R_ISEND );
    return r;
}

int
MPI_Irecv( void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
           MPI_Request* request )
{
    ENTER( R_IRECV );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Irecv" ) : 0;
    int      r    = PMPI_Irecv( buf, count, dt, source, tag, comm, request );
    if ( tracing && source != MPI_PROC_NULL && r == MPI_SUCCESS )
    {
        uint64_t id = next_req_id++;
        check( OTF2_EvtWriter_MpiIrecvRequest( evt, NULL, now(), id ), "MpiIrecvRequest" );
        req_add( request, *request, id, cref, 1 );
    }
    LEAVE( R_IRECV );
    return r;
}

/* ------------------------------------------------------------------------ */
/* Completion                                                                */
/* ------------------------------------------------------------------------ */
int
MPI_Wait( MPI_Request* request, MPI_Status* status )
{
    MPI_Status  local;
    MPI_Status* st    = status == MPI_STATUS_IGNORE ? &local : status;
    MPI_Request saved = *request;
    ENTER( R_WAIT );
    int r = PMPI_Wait( request, st );
    req_complete( request, saved, st );
    LEAVE( R_WAIT );
    return r;
}

int
MPI_Waitall( int count, MPI_Request requests[], MPI_Status statuses[] )
{
    scratch s;
    ENTER( R_WAITALL );
    scratch_init( &s, count, requests, statuses );
    int r = PMPI_Waitall( count, requests, s.st );
    for ( int i = 0; i < count; i++ )
    {
        req_complete( &requests[ i ], s.saved[ i ], &s.st[ i ] );   /* NULL requests skipped */
    }
    scratch_free( &s, statuses );
    LEAVE( R_WAITALL );
    return r;
}

int
MPI_Waitany( int count, MPI_Request requests[], int* index, MPI_Status* status )
{
    MPI_Status  local;
    MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
    scratch     s;
    ENTER( R_WAITANY );
    scratch_init( &s, count, requests, MPI_STATUSES_IGNORE );   /* only the handle copy is used */
    int r = PMPI_Waitany( count, requests, index, st );
    if ( *index != MPI_UNDEFINED )
    {
        req_complete( &requests[ *index ], s.saved[ *index ], st );
    }
    scratch_free( &s, MPI_STATUSES_IGNORE );
    LEAVE( R_WAITANY );
    return r;
}

int
MPI_Waitsome( int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[] )
{
    scratch s;
    ENTER( R_WAITSOME );
    scratch_init( &s, incount, requests, statuses );
    int r = PMPI_Waitsome( incount, requests, outcount, indices, s.st );
    if ( *outcount != MPI_UNDEFINED )
    {
        for ( int k = 0; k < *outcount; k++ )
        {
            int i = indices[ k ];
            req_complete( &requests[ i ], s.saved[ i ], &s.st[ k ] );
        }
    }
    scratch_free( &s, statuses );
    LEAVE( R_WAITSOME );
    return r;
}

int
MPI_Test( MPI_Request* request, int* flag, MPI_Status* status )
{
    MPI_Status  local;
    MPI_Status* st    = status == MPI_STATUS_IGNORE ? &local : status;
    MPI_Request saved = *request;
    ENTER( R_TEST );
    int r = PMPI_Test( request, flag, st );
    if ( *flag )
    {
        req_complete( request, saved, st );
    }
    LEAVE( R_TEST );
    return r;
}

int
MPI_Testall( int count, MPI_Request requests[], int* flag, MPI_Status statuses[] )
{
    scratch s;
    ENTER( R_TESTALL );
    scratch_init( &s, count, requests, statuses );
    int r = PMPI_Testall( count, requests, flag, s.st );
    if ( *flag )
    {
        for ( int i = 0; i < count; i++ )
        {
            req_complete( &requests[ i ], s.saved[ i ], &s.st[ i ] );
        }
    }
    scratch_free( &s, statuses );
    LEAVE( R_TESTALL );
    return r;
}

/* ------------------------------------------------------------------------ */
/* Collectives (byte counts as Score-P: N = comm size, b = count * type size) */
/* ------------------------------------------------------------------------ */
static void
coll_end( OTF2_CollectiveOp op, uint32_t cref, uint32_t root, uint64_t sent, uint64_t recvd )
{
    if ( tracing )
    {
        check( OTF2_EvtWriter_MpiCollectiveEnd( evt, NULL, now(), op, cref, root, sent, recvd ),
               "MpiCollectiveEnd" );
    }
}

int
MPI_Barrier( MPI_Comm comm )
{
    ENTER( R_BARRIER );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Barrier" ) : 0;
    COLL_BEGIN();
    int r = PMPI_Barrier( comm );
    coll_end( OTF2_COLLECTIVE_OP_BARRIER, cref, OTF2_COLLECTIVE_ROOT_NONE, 0, 0 );
    LEAVE( R_BARRIER );
    return r;
}

/* Bcast: root sent N*b, recv b; others sent 0, recv b. */
int
MPI_Bcast( void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm )
{
    ENTER( R_BCAST );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Bcast" ) : 0;
    COLL_BEGIN();
    int r = PMPI_Bcast( buf, count, dt, root, comm );
    if ( tracing )
    {
        int me;
        PMPI_Comm_rank( comm, &me );
        uint64_t b = msg_bytes( count, dt ), n = comm_size( comm );
        coll_end( OTF2_COLLECTIVE_OP_BCAST, cref, ( uint32_t )root, me == root ? n * b : 0, b );
    }
    LEAVE( R_BCAST );
    return r;
}

/* Reduce: root sent b, recv N*b; others sent b, recv 0. */
int
MPI_Reduce( const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
            MPI_Comm comm )
{
    ENTER( R_REDUCE );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Reduce" ) : 0;
    COLL_BEGIN();
    int r = PMPI_Reduce( sendbuf, recvbuf, count, dt, op, root, comm );
    if ( tracing )
    {
        int me;
        PMPI_Comm_rank( comm, &me );
        uint64_t b = msg_bytes( count, dt ), n = comm_size( comm );
        coll_end( OTF2_COLLECTIVE_OP_REDUCE, cref, ( uint32_t )root, b, me == root ? n * b : 0 );
    }
    LEAVE( R_REDUCE );
    return r;
}

/* Allreduce: sent N*b, recv N*b. */
int
MPI_Allreduce( const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm )
{
    ENTER( R_ALLREDUCE );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Allreduce" ) : 0;
    COLL_BEGIN();
    int r = PMPI_Allreduce( sendbuf, recvbuf, count, dt, op, comm );
    if ( tracing )
    {
        uint64_t b = msg_bytes( count, dt ), n = comm_size( comm );
        coll_end( OTF2_COLLECTIVE_OP_ALLREDUCE, cref, OTF2_COLLECTIVE_ROOT_NONE, n * b, n * b );
    }
    LEAVE( R_ALLREDUCE );
    return r;
}

/* Allgather: sent N*b_send, recv N*b_recv (equal for matching signatures;
 * with MPI_IN_PLACE the send size is taken from the receive arguments). */
int
MPI_Allgather( const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, MPI_Comm comm )
{
    ENTER( R_ALLGATHER );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Allgather" ) : 0;
    COLL_BEGIN();
    int r = PMPI_Allgather( sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm );
    if ( tracing )
    {
        uint64_t br = msg_bytes( recvcount, recvtype );
        uint64_t bs = sendbuf == MPI_IN_PLACE ? br : msg_bytes( sendcount, sendtype );
        uint64_t n  = comm_size( comm );
        coll_end( OTF2_COLLECTIVE_OP_ALLGATHER, cref, OTF2_COLLECTIVE_ROOT_NONE, n * bs, n * br );
    }
    LEAVE( R_ALLGATHER );
    return r;
}

/* Alltoall: sent N*b, recv N*b (b = bytes per pair). */
int
MPI_Alltoall( const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm )
{
    ENTER( R_ALLTOALL );
    uint32_t cref = tracing ? comm_ref( comm, "MPI_Alltoall" ) : 0;
    COLL_BEGIN();
    int r = PMPI_Alltoall( sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm );
    if ( tracing )
    {
        uint64_t br = msg_bytes( recvcount, recvtype );
        uint64_t bs = sendbuf == MPI_IN_PLACE ? br : msg_bytes( sendcount, sendtype );
        uint64_t n  = comm_size( comm );
        coll_end( OTF2_COLLECTIVE_OP_ALLTOALL, cref, OTF2_COLLECTIVE_ROOT_NONE, n * bs, n * br );
    }
    LEAVE( R_ALLTOALL );
    return r;
}
