package request

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zrviz/zrviz/core"
)

// OpSpec declares one operation of the ops language, once. Everything that speaks the language
// is read from [Ops]: [ParseOp] and [Op.OpLine], the forms the page fills ([Forms]), every help
// text and usage list ([Grammar], [HelpLines]), the README's grammar table (held to [GrammarTable]
// by a test), and what the sequence runner ([Op.Apply]) calls.
type OpSpec struct {
	// Kind is the operation's first word.
	Kind string
	// Args are the words after it: placeholders (PATH, OFFSET, N), keywords and choices.
	Args []Arg
	// Help says what the operation is, in one line, as the kernel sees it.
	Help string
	// Kernel is the kernel entry point the model follows (fs/f2fs of Linux 6.12).
	Kernel string
	// Effects are what the operation may do to the mount's state.
	Effects Effect

	// parse fills op from the line's words after the kind, whose count and keywords already
	// match Args.
	parse func(op *Op, words []string) error
	// line writes op back as its words after the kind.
	line func(op Op) []string
	// apply runs op on the mount q; f is the file it names, if any. Nil for a zero, whose walk
	// the caller keeps (source.RunOps).
	apply func(op Op, q *core.Seq, f core.Input) (*core.WriteResult, error)
	// cost says what op can make the engine hold, read before it runs; nil: nothing that grows
	// with the file or the volume.
	cost func(op Op) Cost
	// walks: the operation is an engine walk over the file's slots with a core.Result (zero,
	// punch, truncate), run by core.Seq.Walk with op.Request; apply is nil.
	walks bool
	// Played is the facet of an operation a player plays (request/played.go); nil for the others.
	Played *Played
}

// Cost is what an operation can make the engine hold, known before it runs: what a server's
// memory budget reserves for it (web/reservations.go turns pages into bytes with its measured
// figures). Every op's cost comes from its declaration, so a new op brings its own.
type Cost struct {
	// Dirties is the pages it can dirty, each to be written back by a later fsync, sync, zero
	// over it or the unmount: a write's pages and its partial edges, fill_zero's two edge pages.
	// What a sequence dirties is bounded by the volume's main area whatever the ops say.
	Dirties int64
	// Walks: it walks the file's slots, as one simulation does (a zero).
	Walks bool
	// GrowsTo is the size it can grow the file to (0: it never grows it).
	GrowsTo int64
}

// Cost is what the operation can make the engine hold ([Cost]); zero for an unknown kind.
func (o Op) Cost() Cost {
	s, ok := o.Spec()
	if !ok || s.cost == nil {
		return Cost{}
	}
	return s.cost(o)
}

// Effect is a bit set of what an operation may do.
type Effect uint16

const (
	// DirtiesPages: pages of a file become dirty (a buffered write, fill_zero's partial pages).
	DirtiesPages Effect = 1 << iota
	// WritesBack: dirty pages are written back (in place or out of place).
	WritesBack
	// Invalidates: f2fs_invalidate_blocks calls, the ones a trace's markers hold per operation.
	Invalidates
	// MovesBlocks: garbage collection moves valid blocks (gc, checkpoint's marked node blocks,
	// f2fs_balance_fs inside the operation).
	MovesBlocks
	// Checkpoints: prefree segments become free.
	Checkpoints
	// SetsClock: the seconds since mount that update_segment_mtime and cost-benefit read.
	SetsClock
	// Tunes: a sysfs tunable of the mount.
	Tunes
	// NamesFile: the operation's first argument is a file's path.
	NamesFile
)

// Op kinds.
const (
	OpZero       = "zero"
	OpPunch      = "punch"
	OpTruncate   = "truncate"
	OpUnlink     = "unlink"
	OpWrite      = "write"
	OpFsync      = "fsync"
	OpSync       = "sync"
	OpTune       = "tune"
	OpCheckpoint = "checkpoint"
	OpGC         = "gc"
	OpNow        = "now"
	OpMount      = "mount"
)

// MountLFS is the one mount option the mount operation takes.
const MountLFS = "mode=lfs"

// Tunables the tune operation writes (/sys/fs/f2fs/<dev>/NAME).
const (
	TuneIPUPolicy       = "ipu_policy"
	TuneReservedBlocks  = "reserved_blocks"
	TuneMaxVictimSearch = "max_victim_search"
)

// placeholders, the upper-case words of a form.
var (
	argPath    = Arg{Name: "PATH"}
	argOffset  = Arg{Name: "OFFSET"}
	argLength  = Arg{Name: "LENGTH"}
	argN       = Arg{Name: "N"}
	argSeconds = Arg{Name: "SECONDS"}
	argSize    = Arg{Name: "SIZE"}
)

// Ops is the ops language: every operation, in the order help texts list them (a copy: the
// declarations are built once, by [opTable]).
func Ops() []OpSpec { return slices.Clone(opTable()) }

// opTable is the declarations, built once: ParseOp, OpLine and Cost look them up per line and
// per operation.
var opTable = sync.OnceValue(func() []OpSpec {
	return []OpSpec{
		// The played operations (zero, punch, truncate): their form, parse, line and walk come
		// from their Played facet (request/played.go, playedOp).
		playedOp(OpSpec{Kind: OpZero,
			Help:    "fallocate(FALLOC_FL_ZERO_RANGE[|FALLOC_FL_KEEP_SIZE]) on PATH: the played operation",
			Kernel:  "f2fs_zero_range → f2fs_do_zero_range",
			Effects: NamesFile | DirtiesPages | WritesBack | Invalidates | MovesBlocks,
			Played: &Played{Op: core.OpZero, Range: RangeOffsetLength, KeepSize: true, Label: "zero range",
				Syscall: "fallocate", Flag: "ZERO_RANGE", FlushesFirst: true, Compare: true, Sandbox: true,
				PerDnode: "f2fs_do_zero_range"},
			// fill_zero's partial pages at the range's edges; without keep_size i_size grows to
			// the range's end.
			cost: func(op Op) Cost {
				c := Cost{Dirties: 2, Walks: true}
				if !op.KeepSize {
					c.GrowsTo = max(op.Offset+op.Length, 0)
				}
				return c
			}}),
		playedOp(OpSpec{Kind: OpPunch,
			Help:    "fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE) on PATH: slots cleared to NULL_ADDR, their blocks freed",
			Kernel:  "f2fs_punch_hole → f2fs_truncate_hole → f2fs_truncate_data_blocks_range",
			Effects: NamesFile | DirtiesPages | Invalidates | MovesBlocks,
			Played: &Played{Op: core.OpPunch, Range: RangeOffsetLength, KeepsSize: true, Label: "punch hole",
				Syscall: "fallocate", Flag: "PUNCH_HOLE", Compare: true, Sandbox: true, Skips: true,
				PerDnode: "f2fs_truncate_data_blocks_range"},
			// fill_zero's partial pages at the range's edges; i_size never changes.
			cost: func(Op) Cost { return Cost{Dirties: 2, Walks: true} }}),
		playedOp(OpSpec{Kind: OpTruncate,
			Help:    "truncate(2) PATH to SIZE bytes: blocks past it and the nodes that held them freed",
			Kernel:  "f2fs_setattr → f2fs_truncate → f2fs_do_truncate_blocks, f2fs_truncate_inode_blocks",
			Effects: NamesFile | DirtiesPages | Invalidates | MovesBlocks,
			Played: &Played{Op: core.OpTruncate, Range: RangeToSize, Label: "truncate",
				Syscall: "truncate", FreesNodes: true, Skips: true, PerDnode: "f2fs_truncate_data_blocks_range"},
			// truncate_partial_data_page's one page; the size it sets.
			cost: func(op Op) Cost { return Cost{Dirties: 1, Walks: true, GrowsTo: max(op.Offset, 0)} }}),
		playedOp(OpSpec{Kind: OpUnlink,
			Help:    "unlink(2) PATH, its last link: every data block, every node block and the inode's own block freed (its directory with inline dentries)",
			Kernel:  "f2fs_unlink → f2fs_delete_entry (f2fs_add_orphan_inode), f2fs_evict_inode → f2fs_truncate → f2fs_truncate_blocks(inode, 0), f2fs_remove_inode_page (f2fs_remove_orphan_inode)",
			Effects: NamesFile | Invalidates | MovesBlocks,
			Played: &Played{Op: core.OpUnlink, Range: RangeFile, Label: "unlink",
				Syscall: "unlink", FreesNodes: true, Skips: true, PerDnode: "f2fs_truncate_data_blocks_range"},
			// It dirties no data page (its own are dropped); the walk is a truncate to 0's.
			cost: func(Op) Cost { return Cost{Walks: true} }}),
		{Kind: OpWrite, Args: []Arg{argPath, argOffset, argLength},
			Help:    "a buffered write(2) of LENGTH bytes at OFFSET (pwrite, no fsync)",
			Kernel:  "f2fs_file_write_iter",
			Effects: NamesFile | DirtiesPages | MovesBlocks,
			parse: func(op *Op, w []string) error {
				op.Run = Run{Path: w[0], HasLength: true}
				return parseRange(op, w)
			},
			line: func(op Op) []string {
				return []string{op.Path, strconv.FormatInt(op.Offset, 10), strconv.FormatInt(op.Length, 10)}
			},
			apply: func(op Op, q *core.Seq, f core.Input) (*core.WriteResult, error) {
				return q.Write(f, op.Offset, op.Length)
			},
			// Its whole pages and the partial ones at either end; i_size grows to its end.
			cost: func(op Op) Cost {
				return Cost{Dirties: max(op.Length, 0)>>12 + 2, GrowsTo: max(op.Offset+op.Length, 0)}
			}},
		{Kind: OpFsync, Args: []Arg{argPath},
			Help:    "fsync(2): PATH's dirty pages written back",
			Kernel:  "f2fs_sync_file",
			Effects: NamesFile | WritesBack | MovesBlocks,
			parse:   func(op *Op, w []string) error { op.Run = Run{Path: w[0]}; return checkPath(w[0]) },
			line:    func(op Op) []string { return []string{op.Path} },
			apply:   func(_ Op, q *core.Seq, f core.Input) (*core.WriteResult, error) { return q.Fsync(f) }},
		{Kind: OpSync,
			Help:    "sync(2): every dirty page written back, then a checkpoint",
			Kernel:  "f2fs_sync_fs",
			Effects: WritesBack | MovesBlocks | Checkpoints,
			apply:   func(_ Op, q *core.Seq, _ core.Input) (*core.WriteResult, error) { return q.Sync() }},
		{Kind: OpTune, Args: []Arg{{Words: []string{TuneIPUPolicy, TuneReservedBlocks, TuneMaxVictimSearch}}, argN},
			Help:    "echo N > /sys/fs/f2fs/<dev>/NAME (max_victim_search: the dirty sections a background gc searches)",
			Kernel:  "f2fs_sbi_store",
			Effects: Tunes,
			parse: func(op *Op, w []string) error {
				op.Name = w[0]
				if w[0] == TuneMaxVictimSearch {
					v, err := strconv.ParseUint(w[1], 10, 32)
					if err != nil || v == 0 {
						return &FieldError{Field: "value", Value: w[1], Msg: "want a count of at least 1"}
					}
					op.Value = v
					return nil
				}
				v, err := ParseSize("value", w[1])
				op.Value = uint64(v)
				return err
			},
			line: func(op Op) []string { return []string{op.Name, strconv.FormatUint(op.Value, 10)} },
			apply: func(op Op, q *core.Seq, _ core.Input) (*core.WriteResult, error) {
				return q.Tune(op.Name, op.Value)
			}},
		{Kind: OpCheckpoint,
			Help:    "ioctl(F2FS_IOC_WRITE_CHECKPOINT): prefree segments become free",
			Kernel:  "f2fs_write_checkpoint",
			Effects: MovesBlocks | Checkpoints,
			apply:   func(_ Op, q *core.Seq, _ core.Input) (*core.WriteResult, error) { return q.Checkpoint() }},
		{Kind: OpGC, Args: []Arg{{Words: []string{"1", "0"}}},
			Help:    "ioctl(F2FS_IOC_GARBAGE_COLLECT): 1 foreground, greedy, its victim's blocks moved; 0 background, cost-benefit, its victim's blocks marked",
			Kernel:  "f2fs_ioc_gc → f2fs_gc",
			Effects: MovesBlocks,
			parse:   func(op *Op, w []string) error { op.Value = uint64(w[0][0] - '0'); return nil },
			line:    func(op Op) []string { return []string{strconv.FormatUint(op.Value, 10)} },
			apply:   func(op Op, q *core.Seq, _ core.Input) (*core.WriteResult, error) { return q.GC(int(op.Value)) }},
		{Kind: OpMount, Args: []Arg{{Words: []string{MountLFS}}},
			Help:    "mount -o mode=lfs, which an image does not record: no in-place update, no SSR; first, before any other operation",
			Kernel:  "parse_options (mode=lfs) → f2fs_lfs_mode",
			Effects: Tunes,
			parse:   func(op *Op, w []string) error { op.Name = w[0]; return nil },
			line:    func(op Op) []string { return []string{op.Name} },
			apply:   func(op Op, q *core.Seq, _ core.Input) (*core.WriteResult, error) { return q.Mount(op.Name) }},
		{Kind: OpNow, Args: []Arg{argSeconds},
			Help:    "the clock: seconds since mount from here on (0 at mount; it never runs by itself)",
			Kernel:  "update_segment_mtime's clock (get_mtime)",
			Effects: SetsClock,
			parse: func(op *Op, w []string) error {
				v, err := strconv.ParseUint(w[0], 10, 64)
				if err != nil || v > maxNow {
					return &FieldError{Field: "now", Value: w[0], Msg: fmt.Sprintf("want a whole number of seconds up to %d", uint64(maxNow))}
				}
				op.Value = v
				return nil
			},
			line: func(op Op) []string { return []string{strconv.FormatUint(op.Value, 10)} },
			apply: func(op Op, q *core.Seq, _ core.Input) (*core.WriteResult, error) {
				q.SetNow(op.Value)
				return &core.WriteResult{Op: OpNow, Pages: []core.PageWrite{}}, nil
			}},
	}
})

// OracleOnly are the words of the oracle's guest helper (shared/oracle, zrhelper) that make a
// fixture and change nothing the model reads, and why; [ParseOps] refuses them, [ParseOracleOps]
// skips them. The helper's other words (sleep, pwrite, mkdir, …) change what the model reads and
// are refused by both: a skipped sleep would move the kernel's clock and not the model's.
var oracleOnly = map[string]string{
	"snap":   "the helper's snapshot of the image",
	"show":   "the helper's print of a sysfs value",
	"sysctl": "a vm sysctl the oracle sets so that no writeback runs by itself",
}

// maxNow bounds the clock: about 136 years of seconds, so elapsed_time plus it never wraps.
const maxNow = 1<<32 - 1

// specOf returns the declaration of kind.
func specOf(kind string) (OpSpec, bool) {
	for _, s := range opTable() { // per line and per op: the table itself, no copy
		if s.Kind == kind {
			return s, true
		}
	}
	return OpSpec{}, false
}

// Spec returns the declaration of the operation's kind (false for an unknown kind).
func (o Op) Spec() (OpSpec, bool) { return specOf(o.Kind) }

// Form is the operation's form as written: "zero PATH OFFSET LENGTH [keep_size]".
func (s OpSpec) Form() string {
	w := []string{s.Kind}
	for _, a := range s.Args {
		x := a.Name
		if x == "" {
			x = strings.Join(a.Words, "|")
		}
		if a.Optional {
			x = "[" + x + "]"
		}
		w = append(w, x)
	}
	return strings.Join(w, " ")
}

// Grammar lists every operation's form, for error messages and usage lines.
func Grammar() string {
	var forms []string
	for _, s := range Ops() {
		forms = append(forms, s.Form())
	}
	return strings.Join(forms, ", ")
}

// HelpLines is the ops language as a help text: one operation a line, its form then what it is,
// each line starting with indent.
func HelpLines(indent string) string {
	width := 0
	for _, s := range Ops() {
		width = max(width, len(s.Form()))
	}
	var b strings.Builder
	for _, s := range Ops() {
		fmt.Fprintf(&b, "%s%-*s  %s\n", indent, width, s.Form(), s.Help)
	}
	fmt.Fprintf(&b, "%sOFFSET, LENGTH and N: decimal, 0x hex, or with a unit (64MiB); # starts a comment.\n", indent)
	return b.String()
}

// Forms lists the operations of the ops language as forms to fill, in the order of [Ops].
func Forms() []Form {
	var out []Form
	for _, s := range Ops() {
		args := append([]Arg{}, s.Args...)
		out = append(out, Form{Kind: s.Kind, Line: s.Form(), Args: args})
	}
	return out
}

// parseWith reads the words after the kind by s's Args: their count (optional words last), each
// keyword's spelling, then s.parse.
func (s OpSpec) parseWith(op *Op, words []string) error {
	need := 0
	for _, a := range s.Args {
		if !a.Optional {
			need++
		}
	}
	if len(words) < need || len(words) > len(s.Args) {
		return errForm
	}
	for i, w := range words {
		if a := s.Args[i]; a.Name == "" && !contains(a.Words, w) {
			return errForm
		}
	}
	if s.parse == nil {
		return nil
	}
	return s.parse(op, words)
}

// errForm is a line whose words do not fit its operation's form.
var errForm = fmt.Errorf("request: words do not fit the form")

func contains(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// parseRange reads PATH OFFSET LENGTH.
func parseRange(op *Op, w []string) error {
	if err := checkPath(w[0]); err != nil {
		return err
	}
	var err error
	if op.Offset, err = ParseSize(FieldOffset, w[1]); err != nil {
		return err
	}
	op.Length, err = ParseSize(FieldLength, w[2])
	return err
}
