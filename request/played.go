package request

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
)

// Played is the facet of an operation a player plays: one walk of the engine over one file's
// slots (core.Seq.Walk), with a core.Result. An operation of [Ops] with this facet is playable,
// and everything that names or plays the call a page plays reads it here: the run query's grammar
// ([Parse]) and its ops line ([Run.OpLine], [RunOp]), the run page's form, crumb and heading
// (web/pages.go), the page contract the browser's modules read (web/contract.go: no JS copy), the
// CLI's run (cmd/zrviz), and every view of a run — the after-check, the writeback and next
// panels, the CSV, the compare page — which play [RunOp] of the run. So a new playable op is one
// declaration in [Ops] with this facet (and its engine walk in core).
type Played struct {
	// Op is the engine's call (core.Request.Op); its String is the operation's kind.
	Op core.Op
	// Range is how the operation names the slots it walks: its words after PATH, its query
	// fields, the request it makes of a file of a given size.
	Range RangeRule
	// KeepSize: the call takes FALLOC_FL_KEEP_SIZE as a choice (keep_size, keepSize=true). A punch
	// always carries it (vfs_fallocate refuses PUNCH_HOLE without), so has no choice.
	KeepSize bool
	// Label is the call in the pages' words: the run form's choice, the crumb, the compare side.
	Label string
	// Syscall and Flag are the system call and the mode it is called with ("fallocate",
	// "PUNCH_HOLE"; "truncate", ""): [Played.Call] and [Played.Describe] write them.
	Syscall, Flag string
	// KeepsSize: the call always carries FALLOC_FL_KEEP_SIZE (a punch): i_size never changes.
	KeepsSize bool
	// FlushesFirst: the kernel writes the range's dirty pages back before its walk
	// (filemap_write_and_wait_range in f2fs_zero_range), so a player shows the walk of the file as
	// that left it; the other calls walk the file as the operations before them left it.
	FlushesFirst bool
	// Compare: a side of the compare page, which plays every such call of one range side by side,
	// batched (their ranges are the same rule: RangeOffsetLength).
	Compare bool
	// Sandbox: the sandbox's synthetic file (slots, no node addresses) can play it.
	Sandbox bool
	// FreesNodes: the call frees node blocks (truncate_node): the pages and the CLI show the count.
	FreesNodes bool
	// Skips: the call skips addresses that are not valid (f2fs_truncate_data_blocks_range's
	// __is_valid_data_blkaddr): the pages and the CLI show the count.
	Skips bool
	// PerDnode is the kernel function the call runs once per dnode chunk, as the slots panel
	// names it.
	PerDnode string
}

// RangeRule is how a played operation names its range.
type RangeRule uint8

const (
	// RangeOffsetLength is OFFSET LENGTH (query fields offset and length): the bytes
	// [offset, offset+length); without a length, to the end of the file.
	RangeOffsetLength RangeRule = iota
	// RangeToSize is SIZE (query field size): the file cut to size bytes, what lies past it
	// freed; the request's Offset is the size, its Length 0.
	RangeToSize
	// RangeFile is no words and no field: the call takes the whole file (an unlink's
	// f2fs_truncate_blocks(inode, 0)); the request's Offset and Length are 0.
	RangeFile
)

// String names the rule as the page contract sends it.
func (r RangeRule) String() string {
	switch r {
	case RangeToSize:
		return "size"
	case RangeFile:
		return "file"
	}
	return "offset-length"
}

// Args are the rule's words after PATH in the ops language.
func (r RangeRule) Args() []Arg {
	switch r {
	case RangeToSize:
		return []Arg{argSize}
	case RangeFile:
		return nil
	}
	return []Arg{argOffset, argLength}
}

// Fields are the rule's query fields, in the order of its words.
func (r RangeRule) Fields() []string {
	switch r {
	case RangeToSize:
		return []string{FieldSize}
	case RangeFile:
		return nil
	}
	return []string{FieldOffset, FieldLength}
}

// RangeRules are the rules, in the order usage lines list them.
func RangeRules() []RangeRule { return []RangeRule{RangeOffsetLength, RangeToSize, RangeFile} }

// Fields are the query fields of the played operation besides path and mode: its range's, and
// keepSize where the call takes it.
func (p Played) Fields() []string {
	f := append([]string{}, p.Range.Fields()...) // never nil: the contract sends [] for a whole-file call
	if p.KeepSize {
		f = append(f, FieldKeepSize)
	}
	return f
}

// playedArgs are the words of a played operation's form: PATH, its range's, [keep_size].
func playedArgs(p Played) []Arg {
	a := append([]Arg{argPath}, p.Range.Args()...)
	if p.KeepSize {
		a = append(a, Arg{Words: []string{"keep_size"}, Optional: true})
	}
	return a
}

// Playable lists the declarations of the operations a player plays, in the order of [Ops].
func Playable() []OpSpec {
	var out []OpSpec
	for _, s := range opTable() {
		if s.Played != nil {
			out = append(out, s)
		}
	}
	return out
}

// PlayedSpec is the declaration of the played operation kind ("" is a zero, the run query's
// default); false when kind is not playable.
func PlayedSpec(kind string) (OpSpec, bool) {
	if kind == "" {
		kind = OpZero
	}
	s, ok := specOf(kind)
	return s, ok && s.Played != nil
}

// playedOf is the declaration of the engine's call op.
func playedOf(op core.Op) (OpSpec, bool) {
	for _, s := range opTable() {
		if s.Played != nil && s.Played.Op == op {
			return s, true
		}
	}
	return OpSpec{}, false
}

// Spec is the declaration of the call the run plays (false for a call no operation declares).
func (r Run) Spec() (OpSpec, bool) { return playedOf(r.Op) }

// Kind is the run's call as the ops language and the query's op field name it.
func (r Run) Kind() string {
	if s, ok := r.Spec(); ok {
		return s.Kind
	}
	return r.Op.String()
}

// Played is the facet of the call the run plays (its zero value for an undeclared call).
func (r Run) Played() Played {
	if s, ok := r.Spec(); ok {
		return *s.Played
	}
	return Played{Op: r.Op}
}

// parsePlayed reads a played operation's words after its kind by its facet: PATH, its range,
// keep_size.
func parsePlayed(p Played, op *Op, w []string) error {
	op.Run = Run{Op: p.Op, Path: w[0], Modes: Both(), HasLength: true}
	if err := checkPath(w[0]); err != nil {
		return err
	}
	var err error
	switch p.Range {
	case RangeToSize:
		op.Offset, err = ParseSize(FieldSize, w[1])
		return err
	case RangeFile:
		return nil
	default:
		if op.Offset, err = ParseSize(FieldOffset, w[1]); err != nil {
			return err
		}
		if op.Length, err = ParseSize(FieldLength, w[2]); err != nil {
			return err
		}
	}
	op.KeepSize = p.KeepSize && len(w) == len(playedArgs(p))
	return nil
}

// parseQuery reads the run's range from the query's fields by the facet (Parse has read path and
// op; it reads mode). Absent fields take their defaults: offset 0, length to the end of the file,
// keepSize false; a size is required.
func (p Played) parseQuery(r *Run, get func(string) string) error {
	var err error
	switch p.Range {
	case RangeToSize:
		sz := get(FieldSize)
		if sz == "" {
			return &FieldError{Field: FieldSize, Msg: fmt.Sprintf("missing: %s needs the new size", r.Kind())}
		}
		if r.Offset, err = ParseSize(FieldSize, sz); err != nil {
			return err
		}
		r.HasLength = true
		return nil
	case RangeFile:
		r.HasLength = true
		return nil
	default:
		if v := get(FieldOffset); v != "" {
			if r.Offset, err = ParseSize(FieldOffset, v); err != nil {
				return err
			}
		}
		if v := get(FieldLength); v != "" {
			if r.Length, err = ParseSize(FieldLength, v); err != nil {
				return err
			}
			r.HasLength = true
		}
	}
	if r.KeepSize, err = ParseBool(FieldKeepSize, get(FieldKeepSize)); err != nil {
		return err
	}
	r.KeepSize = r.KeepSize && p.KeepSize
	return nil
}

// request is the engine's request of the rule for a file of size bytes ([Run.Request]).
func (p Played) request(r Run, size int64) core.Request {
	req := core.Request{Op: p.Op, Offset: r.Offset, Length: r.Length, KeepSize: r.KeepSize && p.KeepSize}
	switch p.Range {
	case RangeToSize:
		req.Length = 0
	case RangeFile:
		req.Offset, req.Length = 0, 0
	default:
		if !r.HasLength {
			req.Length = max(size-r.Offset, 0)
			if r.Offset < 0 {
				req.Length = 0
			}
		}
	}
	return req
}

// words are the run's words after its kind in the ops language, its range resolved by req.
func (p Played) words(path string, req core.Request) []string {
	w := []string{path}
	switch p.Range {
	case RangeOffsetLength:
		w = append(w, strconv.FormatInt(req.Offset, 10), strconv.FormatInt(req.Length, 10))
	case RangeToSize:
		w = append(w, strconv.FormatInt(req.Offset, 10))
	}
	if p.KeepSize && req.KeepSize {
		w = append(w, "keep_size")
	}
	return w
}

// Query writes req, the run's resolved request, as the run query's fields of the call (op, its
// range, keepSize): what the run page's links and the compare page's sides carry.
func (p Played) Query(req core.Request, set func(field, value string)) {
	set(FieldOp, p.Op.String())
	switch p.Range {
	case RangeToSize:
		set(FieldSize, strconv.FormatInt(req.Offset, 10))
	case RangeFile:
	default:
		set(FieldOffset, strconv.FormatInt(req.Offset, 10))
		set(FieldLength, strconv.FormatInt(req.Length, 10))
	}
	if p.KeepSize && req.KeepSize {
		set(FieldKeepSize, "true")
	}
}

// Crumb is what the page plays in a few words, for a breadcrumb or a tab's title: "punch hole",
// "truncate to 1 MiB".
func (p Played) Crumb(req core.Request) string {
	if p.Range == RangeToSize {
		return p.Label + " to " + units.Bytes(req.Offset)
	}
	return p.Label
}

// Call is the system call as the pages' sentences name it: "fallocate(PUNCH_HOLE)", "truncate".
func (p Played) Call() string {
	if p.Flag == "" {
		return p.Syscall
	}
	return p.Syscall + "(" + p.Flag + ")"
}

// Sentence names the call on path as a sentence does: "fallocate(PUNCH_HOLE) of /a.bin",
// "truncate of /a.bin to 4,096 bytes".
func (p Played) Sentence(path string, req core.Request) string {
	s := p.Call() + " of " + path
	if p.Range == RangeToSize {
		s += " to " + units.Group(req.Offset) + " bytes"
	}
	return s
}

// Describe is the call with its arguments as the CLI prints it: "fallocate(PUNCH_HOLE|KEEP_SIZE,
// offset 4,096, length 8,192)", "truncate(1,000,000)", "unlink".
func (p Played) Describe(req core.Request) string {
	var args []string
	if p.Flag != "" {
		f := p.Flag
		if p.KeepsSize || p.KeepSize && req.KeepSize {
			f += "|KEEP_SIZE"
		}
		args = append(args, f)
	}
	switch p.Range {
	case RangeToSize:
		args = append(args, units.Group(req.Offset))
	case RangeOffsetLength:
		args = append(args, "offset "+units.Group(req.Offset), "length "+units.Group(req.Length))
	}
	if len(args) == 0 {
		return p.Syscall // a whole-file call takes nothing but the path: "unlink"
	}
	return p.Syscall + "(" + strings.Join(args, ", ") + ")"
}

// playedOp completes a played operation's declaration from its facet: its form's words (PATH, its
// range's, [keep_size]), its parse, its walk.
func playedOp(s OpSpec) OpSpec {
	p := *s.Played
	s.Args = playedArgs(p)
	s.parse = func(op *Op, w []string) error { return parsePlayed(p, op, w) }
	s.walks = true
	return s
}
