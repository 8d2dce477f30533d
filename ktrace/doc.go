// Package ktrace reads what a real kernel did — the f2fs_invalidate_blocks calls recorded while
// fallocate(FALLOC_FL_ZERO_RANGE) ran — and holds it against the model's calls.
//
// Two trace formats are read, told apart by their content ([Parse]):
//
//   - ftrace text, as /sys/kernel/tracing/trace shows a kprobe on f2fs_invalidate_blocks: lines such
//     as "zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=22784" (kernels before 6.14, whose
//     function takes no length: every call is one block) or "... addr=22784 len=256" (6.14 and later,
//     or the batched patch). Any probe name; decimal or 0x values; header (#) lines and other events
//     are ignored. "tracing_mark_write: zr_op K" lines, written to trace_marker before operation K,
//     and "zr_op end" after the last, split the log into operations.
//   - plain lines "ADDR [LEN]" (LEN defaults to 1), as the bpftrace one-liner in the README prints,
//     with # comments, bpftrace's "Attaching 1 probe..." banner and the same zr_op marker lines.
//
// [Compare] finds the first call where two call lists differ; [Check] compares one operation of a
// trace with the model's [core.Result] and says in which slot and dnode of the file the model made
// the call that differs. [CheckOther] holds an operation of the trace that is not a zero (a write,
// fsync, sync or tune of the ops language) against the model's answer for it: no call, since
// writeback releases a page's old block inside the allocator.
//
// A per-block model compared with a trace whose calls span several blocks (a batched kernel) is
// compared block by block: the kernel's calls are expanded first ([Expand]), so the check says
// whether the kernel invalidated the blocks the per-block model does, in the same order, and
// [Report.Expanded] says so. A batched model is always compared call by call: a stock kernel's
// one-block calls then diverge at the first run the patch would have batched, which is the answer.
package ktrace
