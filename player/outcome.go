package player

import (
	"strconv"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
)

// Outcome is what a run returns, in words. It is written here only: the tour's end stop takes its
// title from Returns, and the player page shows Line at the end of the run, and Ahead before it,
// as the server sends them (the hello's "outcome"), composing none of its own.
type Outcome struct {
	// Returns is who returns what: "f2fs_zero_range returns 0", "vfs_fallocate returns -EFBIG".
	Returns string `json:"returns"`
	// Line is the outcome line at the end of the run: Returns and why.
	Line string `json:"line"`
	// Ahead is the line before the end when the end is known from the start (f2fs refuses a
	// compressed file), else "".
	Ahead string `json:"ahead,omitempty"`
}

// refusesCompressed is why f2fs_fallocate returns -EOPNOTSUPP on a compressed or pinned file
// (fs/f2fs/file.c: f2fs_compressed_file || f2fs_is_pinned_file, before anything changes), for a
// zero range and a punch hole alike.
func refusesCompressed(op core.Op) string {
	if op == core.OpPunch {
		return "f2fs refuses FALLOC_FL_PUNCH_HOLE on compressed and pinned files"
	}
	return "f2fs refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files"
}

// Outcome says what the run returns: the first mode's errno that has one (the modes fail alike),
// with the kernel's log line for it when there is one; on success the calls each mode made and,
// for two modes, what batching saved.
func (o *Outline) Outcome() Outcome {
	in, req := o.spec.Input, o.spec.Request
	compressed := in.Inode.Flags&core.FlagCompressed != 0
	note := o.spec.Compression
	if note == "" {
		note = "compressed"
	}
	var out Outcome
	refuses := refusesCompressed(req.Op)
	if compressed && req.Op != core.OpTruncate && req.Op != core.OpUnlink { // truncate(2) and unlink(2) take a compressed file
		out.Ahead = "This file is " + note + ": " + refuses + ", so the first step is EOPNOTSUPP."
	}
	errno, msg := "", ""
	for i, f := range o.Final {
		if f.Errno == "" {
			continue
		}
		if errno == "" {
			errno = f.Errno
		}
		if m := o.Errors[i].Message(); msg == "" && m != "" {
			msg = m
		}
	}
	if errno != "" {
		by := returnsFn(in, req, false)
		out.Returns = by + " returns -" + errno
		switch {
		case errno == "EOPNOTSUPP" && by == "f2fs_fallocate" && compressed:
			out.Line = out.Returns + ": " + refuses + " (f2fs_fallocate checks before anything changes), and this file is " + note +
				": a cluster's first slot may hold COMPRESS_ADDR, the compressed-cluster marker, not an address."
		case errno == "EOPNOTSUPP" && by == "f2fs_fallocate":
			out.Line = out.Returns + ": " + refuses + " (f2fs_fallocate checks before anything changes), and this file is pinned."
		case msg != "":
			out.Line = out.Returns + `: the kernel logs "` + msg + `".`
		default:
			out.Line = out.Returns + "."
		}
		return out
	}
	out.Returns = returnsFn(in, req, true) + " returns 0"
	modes := o.spec.Modes
	calls := uint64(0)
	for _, f := range o.Final {
		calls += f.Stats.Calls
	}
	if calls == 0 {
		out.Line = out.Returns + ": no mapped block was reached, so f2fs_invalidate_blocks was not called."
		return out
	}
	if len(o.Final) == 2 && len(modes) == 2 {
		a, z := o.Final[0].Stats, o.Final[1].Stats
		saved := ""
		if x := timesFewer(a.SITLockAcquisitions, z.SITLockAcquisitions); x != "" {
			saved = ", " + x + " fewer SIT lock holds"
		}
		same := ", and the same slots and SIT at the end."
		if a.WronglyCleared != z.WronglyCleared || a.SlotsSkipped != z.SlotsSkipped {
			// A block mapped twice: the batched punch or truncate validates before it flushes, so
			// the modes free different blocks (docs/kernel-semantics.md §16).
			same = ", the same slots, and a different SIT: a block mapped twice was freed twice by one mode (\"Bitmap was wrongly cleared\")."
		}
		out.Line = out.Returns + ": " + units.Group(a.Calls) + " " + modes[0].String() + " calls against " + units.Group(z.Calls) + " " + modes[1].String() +
			saved + same
		return out
	}
	st := o.Final[0].Stats
	out.Line = out.Returns + ": " + plural(st.Calls, "call", "calls") + ", " + plural(st.BlocksInvalidated, "block", "blocks") + " released."
	return out
}

// timesFewer says how many times fewer z is than a: "8.0×", "862×"; "" unless 0 < z < a.
func timesFewer(a, z uint64) string {
	if z == 0 || a <= z {
		return ""
	}
	r := float64(a) / float64(z)
	prec := 1
	if r >= 10 {
		prec = 0
	}
	return strconv.FormatFloat(r, 'f', prec, 64) + "×"
}
