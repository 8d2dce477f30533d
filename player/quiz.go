package player

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
)

// Question is a prediction the quiz asks at step Ask, before the engine reveals its answer at step
// Reveal (Ask ≤ Reveal; the questions of a tour never overlap). The answer is the engine's, never
// written by hand.
type Question struct {
	Kind    string   `json:"kind"` // "number", "yesno" or "choice"
	Text    string   `json:"text"`
	Choices []string `json:"choices,omitempty"` // for "choice"
	Answer  string   `json:"answer"`            // decimal digits, "yes"/"no", or one of Choices
	Ask     int64    `json:"ask"`
	Reveal  int64    `json:"reveal"`
	// Withholds is what the page must not show while the question is open: [Withholds] of the
	// stop it is asked before. The page applies it and decides nothing of its own.
	Withholds []string `json:"withholds"`

	chunk int32 // for questions revealed when a chunk ends: the chunk, else -1
}

// Check reports whether a student's answer is right: it is right when [Question.Normalise] takes
// it and gives the question's Answer.
func (q *Question) Check(answer string) bool {
	a, err := q.Normalise(answer)
	return err == nil && a == q.Answer
}

// Normalise returns a student's answer in the form the question's Answer is written in, so that
// answers meaning the same compare (and, in a room, count) as one: a number as decimal digits
// without thousands separators (commas, underscores, white space of any kind: "16 384" with a
// no-break space too) or leading zeros, a yes/no as "yes" or "no" (y and n too, any case), a
// choice as Choices spells it (any case). Surrounding space is ignored. An answer the question cannot take is an [*AnswerError]. This is the only place
// answers are read: the verdict, the room's counts and the refusal of a slip all go through it.
func (q *Question) Normalise(answer string) (string, error) {
	a := strings.ToLower(strings.TrimSpace(answer))
	switch q.Kind {
	case "number":
		n, err := strconv.ParseUint(strings.Map(dropSeparator, a), 10, 64)
		if err != nil {
			return "", &AnswerError{Answer: answer, Hint: fmt.Sprintf("%q is not a whole number", answer)}
		}
		return strconv.FormatUint(n, 10), nil
	case "yesno":
		switch a {
		case "yes", "y":
			return "yes", nil
		case "no", "n":
			return "no", nil
		}
		return "", &AnswerError{Answer: answer, Hint: fmt.Sprintf("%q: answer yes or no", answer)}
	}
	if i := slices.IndexFunc(q.Choices, func(c string) bool { return strings.EqualFold(c, a) }); i >= 0 {
		return q.Choices[i], nil
	}
	return "", &AnswerError{Answer: answer, Hint: fmt.Sprintf("%q is not one of the choices %s", answer, strings.Join(q.Choices, ", "))}
}

// dropSeparator drops the thousands separators a number may be written with.
func dropSeparator(r rune) rune {
	if r == ',' || r == '_' || unicode.IsSpace(r) {
		return -1
	}
	return r
}

// AnswerError is an answer a question cannot take: "abc" for a number, "maybe" for a yes/no, a
// choice not offered. Hint says so in words for the student.
type AnswerError struct {
	Answer string
	Hint   string
}

func (e *AnswerError) Error() string { return "player: " + e.Hint }

// What a page withholds while a question is open (issue 30): each names a part of the page, or a
// kind of fact, from which a question's answer could follow. A quiz is a property of the page —
// nothing on it tells the answer, whatever navigation led there — so the question carries its
// list, made here where the question is, and the page consults it for every text, colour and mark
// it draws (static/js/quiz.js, veilOf).
const (
	// WithholdLater: anything of the steps after Ask. The view is held at Ask until the question
	// is answered: a seek, End, a slider drag or a permalink past it comes back to it, and a frame
	// past it shows nothing of its step while it does (the counters, calls, summary, outcome and
	// status of the end would all answer).
	WithholdLater = "later"
	// WithholdNarration: the narration and the live region's step text say what the kernel does
	// next.
	WithholdNarration = "narration"
	// WithholdCalls: the call lanes, the call log and the slider's call markers count the calls.
	WithholdCalls = "calls"
	// WithholdCounters: the headline figures, the counters, the summary and the outcome line.
	WithholdCounters = "counters"
	// WithholdSIT: the SIT panel, its line and its figure: valid counts and their changes.
	WithholdSIT = "sit"
	// WithholdStop: the stop's title, text and terms name what happens there.
	WithholdStop = "stop"
	// WithholdRuns: the physical runs — colouring by run, the dark bar where a run starts, "3
	// physical runs", "physical run 2 of 3" — are what batching calls once each: they answer
	// whether a slot ends the pending run and how many calls a chunk makes.
	WithholdRuns = "runs"
	// WithholdSegments: which segment an address lies in — segment numbers and offsets, "outside
	// the main area", colouring by segment or log type, the mark of an address outside the main
	// area — answers which segment empties first and what f2fs_is_valid_blkaddr finds.
	WithholdSegments = "segments"
)

// Withholds returns what a question asked before a stop of kind stopKind withholds: every
// question the later steps, the narration, calls, counters, SIT panel and the stop's own words;
// questions about runs (does this slot end the run, how many calls) the runs as well; questions
// about segments and addresses (which segment becomes prefree, what validation finds) the
// segments. A kind with no question withholds nothing.
func Withholds(stopKind string) []string {
	base := []string{WithholdLater, WithholdNarration, WithholdCalls, WithholdCounters, WithholdSIT, WithholdStop}
	switch stopKind {
	case StopReserve, StopNodeFree:
		return base
	case StopNewInRun, StopDiscontiguous, StopChunk, StopEndOfRange, StopNullEndsRun, StopNewOwnCall:
		return append(base, WithholdRuns)
	case StopPrefree, StopError, StopValidatedFirst:
		return append(base, WithholdSegments)
	}
	return nil
}

// quizBuilder collects, during Build's pass, what the questions need: when each chunk starts and
// ends and which segments each chunk's calls touch.
type quizBuilder struct {
	o          *Outline
	chunkEnter []int64
	chunkEnd   []int64
	chunkSegs  map[int32][]uint32
	last       int // the last mode's engine index
	// What a question shows of the moment before its stop, which the stop's event does not carry:
	// the step its event came at (a call's stop moves on to its last SIT update), the batched
	// pending run then, and the address of the slot a discontiguous flush is about (the event after
	// the flush, the slot's second visit, carries it).
	at        map[string]int64
	pendingAt map[string]core.Pending
	nextAddr  map[string]uint32
	waitAddr  string // a stop kind whose slot's address the next event of engine waitEngine gives
	waitEng   int
}

func newQuizBuilder(o *Outline) *quizBuilder {
	return &quizBuilder{o: o, chunkSegs: map[int32][]uint32{}, last: len(o.spec.Modes) - 1,
		at: map[string]int64{}, pendingAt: map[string]core.Pending{}, nextAddr: map[string]uint32{}}
}

// made records a stop kind's first event: its step and engine i's pending run before it.
func (q *quizBuilder) made(kind string, i int, step int64, pd core.Pending) {
	q.at[kind] = step
	q.pendingAt[kind] = pd
	// A punch's or truncate's slot visit comes before the flush it causes: no later visit names it,
	// and the question, which would have to be asked before that visit, is not made.
	if kind == StopDiscontiguous && !q.o.isTrunc() {
		q.waitAddr, q.waitEng = kind, i
	}
}

// follow takes engine i's event after a flush whose slot's address a question names: the slot's
// second visit starts a run (or fails validation) at that address.
func (q *quizBuilder) follow(ev core.Event, i int) {
	if q.waitAddr == "" || i != q.waitEng || ev.Kind == core.EvSITUpdate || ev.Kind == core.EvInvalidate {
		return
	}
	if ev.Kind == core.EvSlot || ev.Kind == core.EvError {
		q.nextAddr[q.waitAddr] = ev.Addr
	}
	q.waitAddr = ""
}

func (q *quizBuilder) add(ev core.Event, i int, step int64) {
	switch ev.Kind {
	case core.EvChunkEnter:
		if i == 0 {
			q.chunkEnter = append(q.chunkEnter, step)
			q.chunkEnd = append(q.chunkEnd, -1)
		}
	case core.EvChunkLeave:
		if i == q.last && int(ev.Chunk) < len(q.chunkEnd) && ev.Chunk >= 0 {
			q.chunkEnd[ev.Chunk] = step
		}
	case core.EvSITUpdate:
		if s := q.chunkSegs[ev.Chunk]; i == 0 && len(s) < 8 && !slices.Contains(s, ev.Segno) {
			q.chunkSegs[ev.Chunk] = append(s, ev.Segno)
		}
	}
}

// attach gives the tour's stops their questions, in order and without overlaps.
func (q *quizBuilder) attach(stops []Stop) {
	lastMode := q.o.spec.Modes[q.last]
	var prevReveal int64
	for k := range stops {
		s := &stops[k]
		qs := q.question(s, lastMode)
		if qs == nil {
			continue
		}
		if qs.chunk >= 0 {
			if int(qs.chunk) >= len(q.chunkEnd) || q.chunkEnd[qs.chunk] < 0 {
				continue
			}
			qs.Reveal = q.chunkEnd[qs.chunk]
		}
		if qs.Ask < prevReveal || qs.Ask > qs.Reveal || (k+1 < len(stops) && qs.Reveal > stops[k+1].Step && qs.chunk < 0) {
			continue
		}
		prevReveal = qs.Reveal
		qs.Withholds = Withholds(s.Kind)
		s.Question = qs
	}
}

// question makes the stop's question, or nil.
func (q *quizBuilder) question(s *Stop, lastMode core.Mode) *Question {
	num := func(text string, v uint64, ask int64) *Question {
		return &Question{Kind: "number", Text: text, Answer: strconv.FormatUint(v, 10), Ask: ask, Reveal: s.Step, chunk: -1}
	}
	// A yes/no is asked just before the event it is about: before a call's step, not before its
	// SIT updates (by then the call has been made and the pending run is gone).
	yesno := func(text string, yes bool) *Question {
		a := "no"
		if yes {
			a = "yes"
		}
		return &Question{Kind: "yesno", Text: text, Answer: a, Ask: max(q.stepOf(s)-1, 0), Reveal: s.Step, chunk: -1}
	}
	// The run question names the pending run and the slot's value and asks what the batched mode
	// does, in the same words whatever the answer: the page shows the run's bracket and the slots,
	// not whether the next one continues the run.
	runQ := func(pd core.Pending, holds string) string {
		return fmt.Sprintf("The batched mode's pending run is (blkstart %s, blklen %s). Pass 2 comes to slot %s, which holds %s. Does slot %s end the pending run?",
			units.Group(uint64(pd.Start)), units.Group(uint64(pd.Len)), units.Group(s.Slot), holds, units.Group(s.Slot))
	}
	chunk := q.o.chunkAt(s.Slot)
	switch s.Kind {
	case StopReserve:
		if ev, ok := q.eventOf(s); ok {
			return num("Pass 1 is about to reserve this chunk's holes with f2fs_reserve_new_blocks. By how many blocks will valid_block_count grow?", uint64(ev.Len), max(s.Step-1, 0))
		}
	case StopNewInRun:
		if pd, ok := q.pendingAt[s.Kind]; ok && pd.Len > 0 {
			return yesno(runQ(pd, "NEW_ADDR"), false)
		}
	case StopNullEndsRun:
		if ev, ok := q.eventOf(s); ok && ev.Len > 0 {
			return yesno(fmt.Sprintf("The batched mode's pending run is (blkstart %s, blklen %s). f2fs_truncate_data_blocks_range comes to slot %s, which holds NULL_ADDR: nothing to free. Does slot %s end the pending run?",
				units.Group(uint64(ev.Addr)), units.Group(uint64(ev.Len)), units.Group(s.Slot), units.Group(s.Slot)), ev.Kind == core.EvInvalidate && ev.Action == core.ActRunBreak)
		}
	case StopValidatedFirst:
		if ev, ok := q.eventOf(s); ok && ev.Kind == core.EvSlot {
			ans := choiceSITBit
			if ev.Action == core.ActSkipBounds {
				ans = choiceBounds
			}
			return &Question{Kind: "choice", Text: fmt.Sprintf("f2fs_truncate_data_blocks_range comes to slot %s, which holds block %s. What does f2fs_is_valid_blkaddr_raw find?", units.Group(s.Slot), units.Group(uint64(ev.Addr))),
				Choices: []string{choiceValid, choiceBounds, choiceSITBit}, Answer: ans, Ask: max(q.stepOf(s)-1, 0), Reveal: s.Step, chunk: -1}
		}
	case StopNodeFree:
		if ev, ok := q.eventOf(s); ok {
			return num(fmt.Sprintf("truncate_node has released node %s's block. valid_node_count is %s: what is it once dec_valid_node_count has run?", ev.Node, units.Group(ev.Before)), ev.After, max(q.stepOf(s)-1, 0))
		}
	case StopNewOwnCall:
		if ev, ok := q.eventOf(s); ok {
			return yesno(fmt.Sprintf("Slot %s holds NEW_ADDR: reserved, never written, no SIT bit. The %s mode clears it. Does it call f2fs_invalidate_blocks for it (a zero range skips such a slot)?", units.Group(s.Slot), s.Mode),
				ev.Kind == core.EvInvalidate && ev.State == core.StateNew)
		}
	case StopDiscontiguous:
		ev, ok := q.eventOf(s)
		addr, known := q.nextAddr[s.Kind]
		if ok && known {
			return yesno(runQ(core.Pending{Start: ev.Addr, Len: ev.Len}, "address "+units.Group(uint64(addr))), true)
		}
	case StopError:
		if ev, ok := q.eventOf(s); ok && (ev.Action == core.ActSITBit || ev.Action == core.ActBounds) {
			ans := choiceSITBit
			if ev.Action == core.ActBounds {
				ans = choiceBounds
			}
			return &Question{Kind: "choice", Text: fmt.Sprintf("Pass 2 comes to slot %s, which holds block %s. What does f2fs_is_valid_blkaddr find?", units.Group(s.Slot), units.Group(uint64(ev.Addr))),
				Choices: []string{choiceValid, choiceBounds, choiceSITBit}, Answer: ans, Ask: max(s.Step-1, 0), Reveal: s.Step, chunk: -1}
		}
	case StopChunk:
		if chunk >= 0 {
			qs := num(fmt.Sprintf("How many f2fs_invalidate_blocks calls will the %s mode make for this dnode chunk (%s slots)?", lastMode, units.Group(q.o.Chunks[chunk].Len)),
				q.o.Chunks[chunk].Calls[q.last], s.Step)
			qs.chunk = int32(chunk)
			return qs
		}
	case StopEndOfRange:
		if chunk >= 0 && chunk < len(q.chunkEnter) {
			return num(fmt.Sprintf("The last dnode chunk starts. How many f2fs_invalidate_blocks calls will the %s mode have made in all when it ends?", lastMode),
				q.o.Final[q.last].Stats.Calls, q.chunkEnter[chunk])
		}
	case StopPrefree:
		c := int32(chunk)
		segs := q.chunkSegs[c]
		if chunk < 0 || chunk >= len(q.chunkEnter) || len(segs) < 2 {
			return nil
		}
		ev, ok := q.eventOf(s)
		if !ok || !slices.Contains(segs, ev.Segno) {
			return nil
		}
		choices := make([]string, 0, 4)
		for _, sg := range segs {
			if len(choices) < 4 || sg == ev.Segno {
				choices = append(choices, strconv.FormatUint(uint64(sg), 10))
			}
		}
		slices.SortFunc(choices, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
		choices = slices.Compact(choices)
		if len(choices) > 4 {
			// keep the answer and three others, in order
			ans := strconv.FormatUint(uint64(ev.Segno), 10)
			kept := []string{}
			for _, c := range choices {
				if c == ans || len(kept) < 3 {
					kept = append(kept, c)
				}
			}
			choices = kept
		}
		return &Question{Kind: "choice", Text: "This chunk's calls will release every valid block of one of these segments. Which segment becomes prefree first?",
			Choices: choices, Answer: strconv.FormatUint(uint64(ev.Segno), 10), Ask: q.chunkEnter[chunk], Reveal: s.Step, chunk: -1}
	}
	return nil
}

// The choices of the validation question: what f2fs_is_valid_blkaddr(DATA_GENERIC_ENHANCE) can
// find of a block pass 2 is about to release.
const (
	choiceValid  = "a valid block"
	choiceBounds = "outside the main area"
	choiceSITBit = "its SIT bit is clear"
)

// stepOf returns the step of a stop's own event: a call's stop shows the state after its SIT
// updates, so its Step is later.
func (q *quizBuilder) stepOf(s *Stop) int64 {
	if at, ok := q.at[s.Kind]; ok && at <= s.Step {
		return at
	}
	return s.Step
}

// eventOf replays the event a stop is about: the outline keeps no events, so the stop's own
// numbers are found again in the tour builder's record.
func (q *quizBuilder) eventOf(s *Stop) (core.Event, bool) {
	ev, ok := q.o.stopEvents[s.Kind]
	return ev, ok
}

// chunkAt returns the index of the chunk holding file block index slot, or -1.
func (o *Outline) chunkAt(slot uint64) int {
	i, found := slices.BinarySearchFunc(o.Chunks, slot, func(c Chunk, s uint64) int {
		switch {
		case s < c.Start:
			return 1
		case s >= c.Start+c.Len:
			return -1
		}
		return 0
	})
	if !found {
		return -1
	}
	return i
}
