// Package core is zrviz's zero-range engine: it replays what the Linux F2FS
// kernel does for fallocate(FALLOC_FL_ZERO_RANGE) (f2fs_zero_range and
// f2fs_do_zero_range) on one file, in the upstream per-block mode and in the
// patch's batched mode, and reports every step as a small typed event.
//
// The engine is pure and deterministic: it reads the file's dnode slots and
// the SIT through the [DnodeSource] and [SITSource] interfaces, takes the
// volume's geometry and counters as a [Volume] value and the inode's facts
// as an [Inode] value, and keeps every change in its own overlay. It never
// does I/O of its own and never imports the image reader.
//
// [Simulate] runs a request to the end without keeping events; [Walk] hands
// every event to a function. [NewRun] steps lazily for a player ([Run.Next],
// [Run.SeekTo], [Run.Snapshot], [Run.Changed]); package player builds the
// lockstep player and its outline on it.
//
// A [Seq] runs a sequence of operations on one mount as the kernel does between and around the
// walk: the pages fill_zero and buffered writes ([Seq.Write]) dirty stay in the page cache until
// writeback — before a later zero over them (filemap_write_and_wait_range), at [Seq.Fsync],
// [Seq.Sync] and [Seq.Unmount] — which writes each in place or out of place to the data log
// f2fs_allocate_data_block picks, under the mount's ipu_policy ([Seq.Tune]).
package core
