// Package exercise makes seeded zero-range exercises in the manner of OSTEP's simulators (lfs.py
// and friends): a problem — a slot list for the sandbox, or a file and byte range of an image — and
// three to five questions whose answers the engine computes. The same seed gives the same exercise
// on every machine: the only randomness is a math/rand/v2 PCG seeded with it, consumed in a fixed
// order, with no map iteration and no clock.
package exercise

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/sandbox"
	"github.com/zrviz/zrviz/source"
)

// Kind is what an exercise is about.
type Kind string

// Kinds.
const (
	Slots Kind = "slots" // a slot list run in the sandbox
	File  Kind = "file"  // a byte range of a regular file of an image
)

// ParseKind reads "slots" or "file"; "" is [Slots].
func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case "", Slots:
		return Slots, nil
	case File:
		return File, nil
	}
	return "", fmt.Errorf("exercise: unknown kind %q (want slots or file)", s)
}

// What a question asks; the text says it in words.
const (
	AskCalls    = "calls"    // f2fs_invalidate_blocks calls in Mode
	AskFlush    = "flush"    // does the batched mode flush the pending run when it reaches Slot
	AskPrefree  = "prefree"  // which segment becomes prefree first in Mode
	AskReserved = "reserved" // NULL slots reserved by pass 1
	AskErrno    = "errno"    // what fallocate returns
	AskChunks   = "chunks"   // dnode chunks visited
	AskLongest  = "longest"  // blocks in the longest batched call
	AskBlocks   = "blocks"   // blocks invalidated (SIT bits cleared)
)

// Question is one question and the engine's answer.
type Question struct {
	Text   string `json:"text"`
	Answer string `json:"answer"`
	// Choices lists the options of a choice question (nil otherwise); the answer is one of them.
	Choices []string `json:"-"`
	// Ask, Mode and Slot say what was asked (Slot: a file block index), so a test or a quiz can
	// recompute the answer.
	Ask  string    `json:"-"`
	Mode core.Mode `json:"-"`
	Slot uint64    `json:"-"`
}

// Exercise is a seeded problem and its questions.
type Exercise struct {
	Seed uint64
	Kind Kind
	// Slots is the canonical slot list (kind slots).
	Slots string
	// Image, Path, Offset and Length are the file and range (kind file); Image is the image as
	// given to [New] ("" for the embedded demo).
	Image          string
	Path           string
	Offset, Length int64
	Questions      []Question

	in  core.Input
	req core.Request
}

// MarshalJSON writes {"seed","kind","slots"} or {"seed","kind","path","offset","length"} and the
// questions with their answers.
func (e *Exercise) MarshalJSON() ([]byte, error) {
	type q = Question
	if e.Kind == File {
		return json.Marshal(struct {
			Seed      uint64 `json:"seed"`
			Kind      Kind   `json:"kind"`
			Path      string `json:"path"`
			Offset    int64  `json:"offset"`
			Length    int64  `json:"length"`
			Questions []q    `json:"questions"`
		}{e.Seed, e.Kind, e.Path, e.Offset, e.Length, e.Questions})
	}
	return json.Marshal(struct {
		Seed      uint64 `json:"seed"`
		Kind      Kind   `json:"kind"`
		Slots     string `json:"slots"`
		Questions []q    `json:"questions"`
	}{e.Seed, e.Kind, e.Slots, e.Questions})
}

// Input returns the engine input and request the exercise is about.
func (e *Exercise) Input() (core.Input, core.Request) { return e.in, e.req }

// ErrNoFile is returned for kind file when the image holds no regular file with data.
var ErrNoFile = errors.New("exercise: the image has no regular file that is not empty")

// New makes the exercise of seed. Kind file needs img; name is how the text refers to it (the
// --image argument, "" for the embedded demo). Kind slots ignores both.
func New(seed uint64, kind Kind, img *imgio.Image, name string) (*Exercise, error) {
	rng := rand.New(rand.NewPCG(seed, 0x7a72_7669_7a00_0010)) // "zrviz", issue 10
	e := &Exercise{Seed: seed, Kind: kind}
	switch kind {
	case Slots:
		l := slotList(rng)
		e.Slots = l.String()
		e.in, e.req = l.Input(), l.Request()
	case File:
		if img == nil {
			return nil, errors.New("exercise: kind file needs an image")
		}
		if err := e.pickFile(rng, img); err != nil {
			return nil, err
		}
		e.Image = name
	default:
		return nil, fmt.Errorf("exercise: unknown kind %q", kind)
	}
	if err := e.ask(rng); err != nil {
		return nil, err
	}
	return e, nil
}

// slotList makes a short list a student can work through by hand: two to five pieces (runs that
// continue or jump, NEW and NULL stretches), sometimes a dnode boundary, and one piece in ten a
// repeated address or an address below the main area (EFSCORRUPTED).
func slotList(rng *rand.Rand) *sandbox.List {
	var toks []string
	seg := uint32(2 + rng.IntN(100))
	cur := sandbox.MainBlkaddr + seg*sandbox.BlocksPerSeg
	if rng.IntN(3) == 0 {
		cur += sandbox.BlocksPerSeg - uint32(1+rng.IntN(6)) // near the end of a segment
	} else {
		cur += uint32(rng.IntN(400))
	}
	var listed []uint32
	run := func(n int) {
		if n == 1 {
			toks = append(toks, strconv.FormatUint(uint64(cur), 10))
		} else {
			toks = append(toks, fmt.Sprintf("%d-%d", cur, cur+uint32(n)-1))
		}
		for i := range n {
			listed = append(listed, cur+uint32(i))
		}
		cur += uint32(n)
	}
	run(1 + rng.IntN(8))
	pieces := 2 + rng.IntN(4)
	boundary := false
	for range pieces {
		switch p := rng.IntN(20); {
		case p < 6: // continue the run
			run(1 + rng.IntN(6))
		case p < 9: // jump elsewhere, forwards or backwards, clear of what is listed
			d := uint32(600 + rng.IntN(1400))
			if rng.IntN(2) == 0 {
				cur += d
			} else {
				cur -= d
			}
			run(1 + rng.IntN(6))
		case p < 12:
			toks = append(toks, repeatTok("NEW", 1+rng.IntN(3)))
		case p < 15:
			toks = append(toks, repeatTok("NULL", 1+rng.IntN(3)))
		case p < 18:
			if !boundary {
				toks = append(toks, "|")
				boundary = true
			}
			run(1 + rng.IntN(4))
		case p < 19:
			// A repeated address: one block, one SIT bit.
			toks = append(toks, strconv.FormatUint(uint64(listed[rng.IntN(len(listed))]), 10))
		default:
			toks = append(toks, strconv.Itoa(100+rng.IntN(3900))) // below the main area
		}
	}
	l, err := sandbox.Parse(strings.Join(toks, " "))
	if err != nil {
		// The tokens above are always valid; fall back to a plain run rather than fail.
		return sandbox.Contiguous(7200, 8)
	}
	return l
}

func repeatTok(w string, n int) string {
	if n == 1 {
		return w
	}
	return w + "*" + strconv.Itoa(n)
}

// maxFileRange bounds a file exercise's range (in blocks) so its questions stay about a lesson-sized
// run and the candidate lists stay small.
const maxFileRange = 1 << 16

// pickFile chooses a regular file with data and a page-aligned range of it.
func (e *Exercise) pickFile(rng *rand.Rand, img *imgio.Image) error {
	ents, err := img.Files()
	if err != nil {
		return err
	}
	var files []imgio.Entry
	for _, f := range ents {
		if f.Type == imgio.TypeFile && f.Size > 0 {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return ErrNoFile
	}
	// Two times in three, a file of at least 16 blocks (the lessons are in the bigger ones).
	var big []imgio.Entry
	for _, f := range files {
		if f.Size >= 16*core.BlockSize {
			big = append(big, f)
		}
	}
	if len(big) > 0 && rng.IntN(3) > 0 {
		files = big
	}
	f := files[rng.IntN(len(files))]
	in, err := source.Input(img, f.Path)
	if err != nil {
		return err
	}
	blocks := (f.Size + core.BlockSize - 1) / core.BlockSize
	var start, n int64
	if rng.IntN(4) == 0 {
		start, n = 0, blocks // the whole file
	} else {
		start = rng.Int64N(blocks)
		n = 1 + rng.Int64N(blocks-start)
	}
	n = min(n, maxFileRange)
	e.Path, e.Offset, e.Length = f.Path, start*core.BlockSize, n*core.BlockSize
	e.in, e.req = in, core.Request{Offset: e.Offset, Length: e.Length}
	return nil
}

// facts is what one engine run of a mode tells the questions.
type facts struct {
	res      *core.Result
	prefree  []uint32 // segments in the order they became prefree
	touched  []uint32 // segments touched, in order of first touch
	flushAt  []uint64 // file blocks where a discontiguous flush happened (batched)
	addrSeen []uint64 // file blocks of address slots the run reached, after each chunk's first
	longest  uint32
}

// Run collects the facts of one mode with core.Walk.
func run(in core.Input, req core.Request, m core.Mode) (*facts, error) {
	f := &facts{}
	seen := map[uint32]bool{}
	pre := map[uint32]bool{}
	// An address slot after the chunk's first one meets a pending run (the batched mode never
	// leaves one empty once started); only those make a flush question worth asking.
	first := true
	addr := func(slot uint64) {
		if !first {
			f.addrSeen = append(f.addrSeen, slot)
		}
		first = false
	}
	res, err := core.Walk(in, req, m, func(ev *core.Event) bool {
		switch ev.Kind {
		case core.EvChunkEnter:
			first = true
		case core.EvSlot:
			if ev.State == core.StateAddr {
				addr(ev.Slot)
			}
		case core.EvError:
			if ev.Action == core.ActBounds || ev.Action == core.ActSITBit {
				addr(ev.Slot)
			}
		case core.EvInvalidate:
			if ev.Action == core.ActDiscontiguous {
				f.flushAt = append(f.flushAt, ev.Slot)
			}
			f.longest = max(f.longest, ev.Len)
		case core.EvSITUpdate:
			if !seen[ev.Segno] {
				seen[ev.Segno] = true
				f.touched = append(f.touched, ev.Segno)
			}
			if ev.SegAfter == core.SegPrefree && !pre[ev.Segno] {
				pre[ev.Segno] = true
				f.prefree = append(f.prefree, ev.Segno)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	f.res = res
	slices.Sort(f.addrSeen)
	f.addrSeen = slices.Compact(f.addrSeen)
	return f, nil
}

// ask runs the engine in both modes and picks the questions: the two call counts, then one to
// three more from those that apply, in an order drawn from the seed.
func (e *Exercise) ask(rng *rand.Rand) error {
	pb, err := run(e.in, e.req, core.PerBlock)
	if err != nil {
		return err
	}
	b, err := run(e.in, e.req, core.Batched)
	if err != nil {
		return err
	}
	e.Questions = []Question{
		{Ask: AskCalls, Mode: core.PerBlock, Text: "How many f2fs_invalidate_blocks calls does the per-block (upstream) mode make?",
			Answer: strconv.FormatUint(pb.res.Stats.Calls, 10)},
		{Ask: AskCalls, Mode: core.Batched, Text: "How many f2fs_invalidate_blocks calls does the batched mode make?",
			Answer: strconv.FormatUint(b.res.Stats.Calls, 10)},
	}
	var pool []Question
	if q, ok := e.flushQuestion(rng, b); ok {
		pool = append(pool, q)
	}
	if len(b.touched) > 0 {
		choices := []string{}
		for _, s := range slices.Sorted(slices.Values(b.touched)) {
			choices = append(choices, strconv.FormatUint(uint64(s), 10))
		}
		choices = append(choices, "none")
		ans := "none"
		if len(b.prefree) > 0 {
			ans = strconv.FormatUint(uint64(b.prefree[0]), 10)
		}
		pool = append(pool, Question{Ask: AskPrefree, Mode: core.Batched, Choices: choices, Answer: ans,
			Text: fmt.Sprintf("Which segment becomes prefree (no valid block left) first in the batched mode? (%s)", strings.Join(choices, ", "))})
	}
	if b.res.Stats.SlotsNull > 0 {
		pool = append(pool, Question{Ask: AskReserved, Text: "How many NULL slots does pass 1 reserve (turn into NEW_ADDR)?",
			Answer: strconv.FormatUint(b.res.Stats.Reserved, 10)})
	}
	errnoChoices := []string{"0", "ENOSPC", "EFSCORRUPTED"}
	if ans := errnoOf(b.res); slices.Contains(errnoChoices, ans) {
		pool = append(pool, Question{Ask: AskErrno, Mode: core.Batched, Choices: errnoChoices, Answer: ans,
			Text: "What does fallocate return? (0, ENOSPC, EFSCORRUPTED)"})
	}
	pool = append(pool,
		Question{Ask: AskChunks, Text: "How many dnode chunks does the loop of f2fs_zero_range visit?",
			Answer: strconv.FormatUint(b.res.Stats.DnodeChunks, 10)},
		Question{Ask: AskBlocks, Text: "How many blocks lose their SIT valid bit?",
			Answer: strconv.FormatUint(b.res.Stats.BlocksInvalidated, 10)},
	)
	if b.longest > 0 {
		pool = append(pool, Question{Ask: AskLongest, Mode: core.Batched,
			Text:   "How many blocks does the longest f2fs_invalidate_blocks call of the batched mode release?",
			Answer: strconv.FormatUint(uint64(b.longest), 10)})
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	e.Questions = append(e.Questions, pool[:min(len(pool), 1+rng.IntN(3))]...)
	return nil
}

func errnoOf(r *core.Result) string {
	if r.Errno == "" {
		return "0"
	}
	return r.Errno
}

// flushQuestion asks whether the batched mode flushes its pending run at an address slot it
// reaches, picking a slot that does and one that does not with equal chance when both exist.
func (e *Exercise) flushQuestion(rng *rand.Rand, b *facts) (Question, bool) {
	var yes, no []uint64
	for _, s := range b.addrSeen {
		if _, ok := slices.BinarySearch(b.flushAt, s); ok {
			yes = append(yes, s)
		} else {
			no = append(no, s)
		}
	}
	if len(yes)+len(no) < 2 {
		return Question{}, false
	}
	pick, ans := no, "no"
	if len(no) == 0 || (len(yes) > 0 && rng.IntN(2) == 0) {
		pick, ans = yes, "yes"
	}
	slot := pick[rng.IntN(len(pick))]
	where := fmt.Sprintf("file block %s", units.Group(slot))
	if e.Kind == Slots {
		l, err := sandbox.Parse(e.Slots)
		if err != nil {
			return Question{}, false
		}
		k, ok := l.ListSlot(slot)
		if !ok {
			return Question{}, false
		}
		v, _ := l.Slot(k)
		where = fmt.Sprintf("slot %d of the list (address %d, counting from 0)", k, v)
	}
	return Question{Ask: AskFlush, Mode: core.Batched, Slot: slot, Answer: ans,
		Text: fmt.Sprintf("When the batched mode reaches %s, does it end the pending run there (flush it with f2fs_invalidate_blocks before handling the slot)? (yes/no)", where)}, true
}
