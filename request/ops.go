package request

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/zrviz/zrviz/core"
)

// The ops language is the kernel fixtures' ops files: one operation per line, each declared once
// in [Ops] (its form, what it is, the kernel function it models); [HelpLines] prints them. PATH is
// opened O_RDWR. The clock is what update_segment_mtime writes (the checkpoint's elapsed_time plus
// the seconds since mount) and what cost-benefit's ages are measured from; it never runs by itself.
// Blank lines are ignored, and so is everything from a # at the start of a line or after white
// space; OFFSET, LENGTH and N take the syntax of [ParseSize]. Each operation runs on the state the
// previous one left.

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

// Walks says whether the operation is a walk of the engine over the file's slots, with a
// [core.Result]: a zero, a punch or a truncate ([core.Seq.Walk] runs it).
func (o Op) Walks() bool {
	s, ok := o.Spec()
	return ok && s.walks
}

// ApplyOther runs an operation other than a zero on q: a write or fsync on f (the file the
// operation names), a sync, tune, checkpoint, gc or now on the mount (checkpoint and gc need a
// segment manager: source.NewSeq). A zero is walked by the caller, which keeps the walk's result
// ([core.Seq.Zero]); here it is an error, as is an unknown kind.
func (o Op) ApplyOther(q *core.Seq, f core.Input) (*core.WriteResult, error) {
	s, ok := o.Spec()
	if !ok || s.apply == nil {
		return nil, fmt.Errorf("request: operation %q is not one of %s other than zero", o.Kind, Grammar())
	}
	return s.apply(o, q, f)
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
	ops, _, err := parseOps(r, false)
	return ops, err
}

// ParseOracleOps is [ParseOps] for an ops file of the oracle's guest helper: its words that only
// make the fixture (snap, show, sysctl: see oracleOnly) are skipped and their 1-based line numbers
// returned; every other line is an operation of the language or an error.
func ParseOracleOps(r io.Reader) (ops []Op, skipped []int, err error) {
	return parseOps(r, true)
}

func parseOps(r io.Reader, oracle bool) ([]Op, []int, error) {
	var out []Op
	var skipped []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 8192) // PATH_MAX and four numbers
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(stripComment(sc.Text()))
		if text == "" {
			continue
		}
		if _, ok := oracleOnly[strings.Fields(text)[0]]; ok && oracle {
			skipped = append(skipped, line)
			continue
		}
		op, err := ParseOp(text)
		if err != nil {
			return nil, nil, &LineError{Line: line, Text: text, Err: err}
		}
		if len(out) == MaxOps {
			return nil, nil, &LineError{Line: line, Text: text, Err: fmt.Errorf("more than %d operations", MaxOps)}
		}
		out = append(out, op)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, &LineError{Line: line + 1, Err: err}
	}
	if len(out) == 0 {
		return nil, nil, &FieldError{Field: "ops", Msg: "no operation (want lines of: " + Grammar() + ")"}
	}
	return out, skipped, nil
}

// ParseArgs reads operations from command-line words ("gc 1 gc 0 checkpoint now 30"): each
// operation takes the words its form has, an optional keyword only when it is written.
func ParseArgs(args []string) ([]Op, error) {
	var out []Op
	for i := 0; i < len(args); {
		s, ok := specOf(args[i])
		if !ok {
			_, err := ParseOp(args[i])
			return nil, err
		}
		n := 1
		for _, a := range s.Args {
			if a.Optional && (i+n >= len(args) || !contains(a.Words, args[i+n])) {
				break
			}
			n++
		}
		if i+n > len(args) {
			n = len(args) - i
		}
		op, err := ParseOp(strings.Join(args[i:i+n], " "))
		if err != nil {
			return nil, err
		}
		if len(out) == MaxOps {
			return nil, fmt.Errorf("more than %d operations", MaxOps)
		}
		out = append(out, op)
		i += n
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

// ParseOp reads one operation line.
func ParseOp(text string) (Op, error) {
	f := strings.Fields(text)
	if len(f) == 0 {
		return Op{}, &FieldError{Field: "op", Value: text, Msg: "want: " + Grammar()}
	}
	s, ok := specOf(f[0])
	if !ok {
		msg := "want: " + Grammar()
		if why, ok := oracleOnly[f[0]]; ok {
			msg = fmt.Sprintf("%q is the oracle helper's word (%s), not an operation the model runs; want: %s", f[0], why, Grammar())
		}
		return Op{}, &FieldError{Field: "op", Value: text, Msg: msg}
	}
	op := Op{Kind: s.Kind}
	if err := s.parseWith(&op, f[1:]); err != nil {
		if err == errForm {
			return Op{}, &FieldError{Field: "op", Value: text, Msg: "want: " + s.Form()}
		}
		return Op{}, err
	}
	return op, nil
}

// OpLine writes the operation as a line of the ops language (a played operation's range resolved
// for a file of size bytes).
func (o Op) OpLine(size int64) string {
	s, ok := o.Spec()
	if o.Kind == "" || ok && s.Played != nil {
		return o.Run.OpLine(size)
	}
	if !ok || s.line == nil {
		return o.Kind
	}
	return strings.Join(append([]string{o.Kind}, s.line(o)...), " ")
}

// RunOp makes the operation of a run by its call: the played operation its Op declares.
func RunOp(r Run) Op { return Op{Kind: r.Kind(), Run: r} }

// OpLine writes r as a line of the ops language (with its range resolved for a file of size
// bytes), by its call's declaration.
func (r Run) OpLine(size int64) string {
	p := r.Played()
	return strings.Join(append([]string{r.Kind()}, p.words(r.Path, r.Request(size))...), " ")
}
