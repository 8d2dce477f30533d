package request

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/core"
)

// The ops language is the kernel fixtures' ops files: one operation per line,
//
//	zero PATH OFFSET LENGTH [keep_size]   fallocate(FALLOC_FL_ZERO_RANGE[|FALLOC_FL_KEEP_SIZE])
//	write PATH OFFSET LENGTH              a buffered write(2) (pwrite, no fsync)
//	fsync PATH                            fsync(2)
//	sync                                  sync(2)
//	tune ipu_policy N                     echo N > /sys/fs/f2fs/<dev>/ipu_policy
//	tune reserved_blocks N                echo N > /sys/fs/f2fs/<dev>/reserved_blocks
//	checkpoint                            ioctl(F2FS_IOC_WRITE_CHECKPOINT)
//	gc 1                                  ioctl(F2FS_IOC_GARBAGE_COLLECT, 1): foreground, greedy
//	gc 0                                  ioctl(F2FS_IOC_GARBAGE_COLLECT, 0): background, cost-benefit
//	now SECONDS                           the clock: seconds since mount from here on (0 at mount)
//
// on PATH opened O_RDWR. The clock is what update_segment_mtime writes (the checkpoint's
// elapsed_time plus the seconds since mount) and what cost-benefit's ages are measured from; it
// never runs by itself. Blank lines are ignored, and so is everything from a # at the start of a
// line or after white space; OFFSET, LENGTH and N
// take the syntax of [ParseSize]. Each operation runs on the state the previous one left.

// Op kinds.
const (
	OpZero       = "zero"
	OpWrite      = "write"
	OpFsync      = "fsync"
	OpSync       = "sync"
	OpTune       = "tune"
	OpCheckpoint = "checkpoint"
	OpGC         = "gc"
	OpNow        = "now"
)

// Op is one operation of a sequence. A zero is its Run; a write uses Run's Path, Offset and
// Length; fsync its Path; tune its Name and Value; gc its Value (sync: 1 or 0); now its Value
// (seconds); sync and checkpoint nothing.
type Op struct {
	Kind string
	Run
	Name  string // tune: the tunable ("ipu_policy")
	Value uint64 // tune: its value; gc: sync; now: seconds since mount
}

// IsZero says whether the operation is a zero-range, the one a player plays.
func (o Op) IsZero() bool { return o.Kind == OpZero }

// Apply runs any operation on q for its effect only: a zero walked on f (the file it names) as
// the state q holds of it, any other as [Op.ApplyOther]. Callers that show a walk's calls or a
// write's pages keep the results themselves.
func (o Op) Apply(q *core.Seq, f core.Input) error {
	if o.IsZero() {
		_, _, _, err := q.Zero(f, o.Request(q.File(f).Inode.Size))
		return err
	}
	_, err := o.ApplyOther(q, f)
	return err
}

// ApplyOther runs an operation other than a zero on q: a write or fsync on f (the file the
// operation names), a sync, tune, checkpoint, gc or now on the mount (checkpoint and gc need a
// segment manager: source.NewSeq). A zero is walked by the caller, which keeps the walk's result
// ([core.Seq.Zero]); here it is an error, as is an unknown kind.
func (o Op) ApplyOther(q *core.Seq, f core.Input) (*core.WriteResult, error) {
	switch o.Kind {
	case OpWrite:
		return q.Write(f, o.Offset, o.Length)
	case OpFsync:
		return q.Fsync(f)
	case OpSync:
		return q.Sync()
	case OpTune:
		return q.Tune(o.Name, o.Value)
	case OpCheckpoint:
		return q.Checkpoint()
	case OpGC:
		return q.GC(int(o.Value))
	case OpNow:
		q.SetNow(o.Value)
		return &core.WriteResult{Op: OpNow, Pages: []core.PageWrite{}}, nil
	}
	return nil, fmt.Errorf("request: operation %q is not a write, fsync, sync, tune, checkpoint, gc or now", o.Kind)
}

// MaxOps bounds the operations of one sequence: each is a whole run, and a URL carries them all.
const MaxOps = 64

// LineError is a line of an ops file that cannot be parsed.
type LineError struct {
	Line int // 1-based
	Text string
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d (%q): %v", e.Line, e.Text, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseOps reads a sequence of operations. Every zero's Modes is both; the caller picks the modes.
func ParseOps(r io.Reader) ([]Op, error) {
	var out []Op
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 8192) // PATH_MAX and four numbers
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(stripComment(sc.Text()))
		if text == "" {
			continue
		}
		op, err := ParseOp(text)
		if err != nil {
			return nil, &LineError{Line: line, Text: text, Err: err}
		}
		if len(out) == MaxOps {
			return nil, &LineError{Line: line, Text: text, Err: fmt.Errorf("more than %d operations", MaxOps)}
		}
		out = append(out, op)
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{Line: line + 1, Err: err}
	}
	if len(out) == 0 {
		return nil, &FieldError{Field: "ops", Msg: "no operation (want lines of: " + opForms + ")"}
	}
	return out, nil
}

// stripComment drops a comment: from a # at the start of the line or after white space to the end
// (the oracle's ops files comment their lines).
func stripComment(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return line[:i]
		}
	}
	return line
}

// opForms lists the operations for error messages.
const opForms = "zero PATH OFFSET LENGTH [keep_size], write PATH OFFSET LENGTH, fsync PATH, sync, tune ipu_policy|reserved_blocks N, checkpoint, gc 1|0, now SECONDS"

// ParseOp reads one operation line.
func ParseOp(text string) (Op, error) {
	f := strings.Fields(text)
	bad := func(form string) (Op, error) {
		return Op{}, &FieldError{Field: "op", Value: text, Msg: "want: " + form}
	}
	if len(f) == 0 {
		return bad(opForms)
	}
	op := Op{Kind: f[0]}
	switch f[0] {
	case OpZero:
		if len(f) < 4 || len(f) > 5 || (len(f) == 5 && f[4] != "keep_size") {
			return bad("zero PATH OFFSET LENGTH [keep_size]")
		}
		op.Run = Run{Path: f[1], Modes: Both(), HasLength: true, KeepSize: len(f) == 5}
	case OpWrite:
		if len(f) != 4 {
			return bad("write PATH OFFSET LENGTH")
		}
		op.Run = Run{Path: f[1], HasLength: true}
	case OpFsync:
		if len(f) != 2 {
			return bad("fsync PATH")
		}
		op.Run = Run{Path: f[1]}
	case OpSync, OpCheckpoint:
		if len(f) != 1 {
			return bad(f[0])
		}
		return op, nil
	case OpGC:
		if len(f) != 2 || (f[1] != "0" && f[1] != "1") {
			return bad("gc 1 (foreground) or gc 0 (background)")
		}
		op.Value = uint64(f[1][0] - '0')
		return op, nil
	case OpNow:
		if len(f) != 2 {
			return bad("now SECONDS")
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || v > maxNow {
			return bad(fmt.Sprintf("now SECONDS (a whole number of seconds up to %d)", uint64(maxNow)))
		}
		op.Value = v
		return op, nil
	case OpTune:
		if len(f) != 3 || (f[1] != "ipu_policy" && f[1] != "reserved_blocks") {
			return bad("tune ipu_policy N or tune reserved_blocks N")
		}
		op.Name = f[1]
		v, err := ParseSize("value", f[2])
		if err != nil {
			return Op{}, err
		}
		op.Value = uint64(v)
		return op, nil
	default:
		return bad(opForms)
	}
	if err := checkPath(op.Path); err != nil {
		return Op{}, err
	}
	if op.Kind == OpFsync {
		return op, nil
	}
	var err error
	if op.Offset, err = ParseSize(FieldOffset, f[2]); err != nil {
		return Op{}, err
	}
	if op.Length, err = ParseSize(FieldLength, f[3]); err != nil {
		return Op{}, err
	}
	return op, nil
}

// OpLine writes the operation as a line of the ops language (a zero's length resolved for a file
// of size bytes).
func (o Op) OpLine(size int64) string {
	switch o.Kind {
	case OpZero, "":
		return o.Run.OpLine(size)
	case OpWrite:
		return "write " + o.Path + " " + strconv.FormatInt(o.Offset, 10) + " " + strconv.FormatInt(o.Length, 10)
	case OpFsync:
		return "fsync " + o.Path
	case OpTune:
		return "tune " + o.Name + " " + strconv.FormatUint(o.Value, 10)
	case OpGC, OpNow:
		return o.Kind + " " + strconv.FormatUint(o.Value, 10)
	}
	return o.Kind
}

// maxNow bounds the clock: about 136 years of seconds, so elapsed_time plus it never wraps.
const maxNow = 1<<32 - 1

// ZeroOp makes a zero operation of a run.
func ZeroOp(r Run) Op { return Op{Kind: OpZero, Run: r} }

// OpLine writes r as a line of the ops language (with its length resolved for a file of size bytes).
func (r Run) OpLine(size int64) string {
	req := r.Request(size)
	s := "zero " + r.Path + " " + strconv.FormatInt(req.Offset, 10) + " " + strconv.FormatInt(req.Length, 10)
	if r.KeepSize {
		s += " keep_size"
	}
	return s
}
