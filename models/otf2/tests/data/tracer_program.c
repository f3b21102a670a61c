/* tracer_program.c -- an MPI program for the test of scripts/traces/otf2-pmpi.c
 * (models/otf2/tests/tracer.rs): the calls LULESH does not make.
 * Build and run: see tracer.rs (mpicc ... -lotf2pmpi; OTF2_PMPI_ARCHIVE_DIR=DIR mpiexec -n 4). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main( int argc, char** argv )
{
    int rank, size, i;
    MPI_Init( &argc, &argv );
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    MPI_Comm_size( MPI_COMM_WORLD, &size );
    int right = ( rank + 1 ) % size, left = ( rank + size - 1 ) % size;
    double buf[ 64 ], rbuf[ 64 * 16 ];
    for ( i = 0; i < 64; i++ ) buf[ i ] = rank + i;

    /* blocking ring, with ANY_SOURCE on odd ranks */
    if ( rank % 2 == 0 ) {
        MPI_Send( buf, 10, MPI_DOUBLE, right, 7, MPI_COMM_WORLD );
        MPI_Recv( rbuf, 64, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE );
    } else {
        MPI_Recv( rbuf, 64, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE );
        MPI_Send( buf, 10, MPI_DOUBLE, right, 7, MPI_COMM_WORLD );
    }
    /* PROC_NULL: no message records */
    MPI_Send( buf, 1, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD );

    /* many small immediate sends (MPICH may hand out identical handles) +
     * Waitall with STATUSES_IGNORE and a NULL request in the array */
    MPI_Request rq[ 9 ];
    for ( i = 0; i < 4; i++ ) MPI_Irecv( rbuf + i, 1, MPI_DOUBLE, left, 100 + i, MPI_COMM_WORLD, &rq[ i ] );
    for ( i = 0; i < 4; i++ ) MPI_Isend( buf + i, 1, MPI_DOUBLE, right, 100 + i, MPI_COMM_WORLD, &rq[ 4 + i ] );
    rq[ 8 ] = MPI_REQUEST_NULL;
    MPI_Waitall( 9, rq, MPI_STATUSES_IGNORE );

    /* copy a request handle before waiting on it (handle-value fallback) */
    MPI_Request a, b;
    MPI_Irecv( rbuf, 3, MPI_DOUBLE, left, 200, MPI_COMM_WORLD, &a );
    MPI_Isend( buf, 3, MPI_DOUBLE, right, 200, MPI_COMM_WORLD, &b );
    MPI_Request copy = a;
    MPI_Wait( &copy, MPI_STATUS_IGNORE );
    MPI_Wait( &b, MPI_STATUS_IGNORE );

    /* Waitany / Test loops */
    MPI_Request r2[ 2 ];
    MPI_Irecv( rbuf, 5, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r2[ 0 ] );
    MPI_Isend( buf, 5, MPI_DOUBLE, right, 300, MPI_COMM_WORLD, &r2[ 1 ] );
    int idx, done = 0;
    for ( i = 0; i < 2; i++ ) MPI_Waitany( 2, r2, &idx, MPI_STATUS_IGNORE );
    MPI_Irecv( rbuf, 6, MPI_DOUBLE, left, 400, MPI_COMM_WORLD, &r2[ 0 ] );
    MPI_Isend( buf, 6, MPI_DOUBLE, right, 400, MPI_COMM_WORLD, &r2[ 1 ] );
    MPI_Barrier( MPI_COMM_WORLD );   /* keeps the Test loop short */
    while ( !done ) MPI_Test( &r2[ 0 ], &done, MPI_STATUS_IGNORE );
    done = 0;
    while ( !done ) MPI_Testall( 2, r2, &done, MPI_STATUSES_IGNORE );

    /* collectives */
    MPI_Bcast( buf, 16, MPI_DOUBLE, 1 % size, MPI_COMM_WORLD );
    MPI_Allgather( buf, 2, MPI_DOUBLE, rbuf, 2, MPI_DOUBLE, MPI_COMM_WORLD );
    MPI_Alltoall( rbuf, 1, MPI_DOUBLE, rbuf + 32, 1, MPI_DOUBLE, MPI_COMM_WORLD );
    MPI_Allreduce( MPI_IN_PLACE, buf, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD );
    MPI_Reduce( buf, rbuf, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD );
    MPI_Barrier( MPI_COMM_SELF );
    MPI_Barrier( MPI_COMM_WORLD );
    if ( rank == 0 ) printf( "test-pmpi done on %d ranks\n", size );
    MPI_Finalize();
    return 0;
}
