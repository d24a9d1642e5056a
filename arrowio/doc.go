// Package arrowio moves graphs and results across the Arrow boundary: edge
// readers for Parquet, Arrow IPC (file and stream), CSV/TSV (optionally gzip
// or zstd compressed) and DIMACS .gr; the vertex dictionary between external
// ids and dense int32 ids; the result schemas of the pairs, matrix and stats
// layouts; and writers for IPC file, IPC stream, Parquet and CSV that write to
// a temporary name and rename on success.
//
// arrowio knows Arrow, not CUDA. Errors are prefixed "arrowio: ".
//
// Files (the tests are the *_test.go files beside them):
//
//	bits.go                   copyBits, copying a run of bits between bitmaps at any bit offset.
//	columns_check.go          ErrSameColumn, one column named for two roles.
//	columns_guess.go          choosing the weight column and a vertex table's id column when unnamed.
//	csvread.go                CSV and TSV edge tables, plain or gzip/zstd compressed.
//	dimacs.go                 DIMACS shortest-path graphs (.gr).
//	doc.go                    this overview.
//	edges_format.go           EdgeOutputFormat, the format WriteEdges would write a path in.
//	edges_write.go            WriteEdges, an edge table written as Parquet, IPC or CSV.
//	idlist.go                 ReadIDList, the id lists of --sources-file and --targets-file.
//	outpath.go                where a result goes: a temporary file renamed over it on success.
//	outpath_other.go          processGone where a pid cannot be probed.
//	outpath_unix.go           processGone by kill(pid, 0).
//	peer.go                   the matrix writer's side of a result peer (WriteOptions.ResultPeer).
//	peer_linux.go             the peer's memory and the exchange on its socket (process_vm_writev).
//	peer_other.go             no result peer outside Linux.
//	read.go                   ReadOptions, EdgeTable, the input formats and ReadEdges.
//	read_columns.go           finding the source, destination and weight columns and their id type.
//	read_ids.go               building the vertex dictionary from the id columns.
//	read_ipcbudget.go         the decoded-size budget of IPC batches (IPCMessageBytes).
//	read_ipccheck.go          bounds checks of an IPC schema's flatbuffer before arrow-go decodes it.
//	read_ipcmem_linux.go      PhysicalMemory from sysinfo.
//	read_ipcmem_other.go      PhysicalMemory unknown.
//	read_parquet_columns.go   reading a Parquet file's columns side by side.
//	read_parquet_groups.go    reading a Parquet file's row groups side by side.
//	read_records.go           an edge table from record batches: the accumulator, id keys, weights.
//	result.go                 ResultBuilder, engine blocks turned into result records.
//	result_ids.go             dense ids mapped back to external ids, a column at a time.
//	result_nearest.go         the nearest layout's rows, spread over goroutines.
//	result_pairs.go           the pairs layout's records of a block, built side by side.
//	result_schema.go          Layout and the result schemas.
//	result_validity.go        the validity bitmap of a matrix block.
//	temporaries.go            RemoveTemporaries, the leftovers of results that never finished.
//	vertex_table.go           vertex tables: vertices beyond the ids of the edges.
//	vertices.go               Vertices, the dictionary between external and dense ids.
//	write.go                  WriteOptions, ResultWriter and CreateResult.
//	write_csv.go              the CSV result writer.
//	write_parquet.go          the Parquet result writer: a row group's columns encoded side by side.
//	write_mapped.go           a matrix result as one IPC record batch in a mapped file: the writer.
//	write_mapped_ipc.go       the IPC framing of that file: messages, head room, footer, metadata.
//	write_mapped_linux.go     mapping, in-memory files, huge pages and populating pages.
//	write_mapped_other.go     no mapped matrix outside Linux.
//	write_mapped_parallel.go  copies and bit writes into a mapping on every core, faults as errors.
//	write_mapped_prefill.go   populating the matrix's pages ahead of the copies.
//	writeback.go              WriteBehind, starting the kernel's writeback as a result grows.
//	writeback_linux.go        startWriteback by sync_file_range.
//	writeback_other.go        startWriteback where sync_file_range does not exist.
package arrowio
