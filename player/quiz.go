package player

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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

	chunk int32 // for questions revealed when a chunk ends: the chunk, else -1
}

// Check reports whether a student's answer is right: numbers compare as numbers (thousands
// separators and spaces ignored), yes/no and choices case-insensitively.
func (q *Question) Check(answer string) bool {
	a := strings.TrimSpace(answer)
	switch q.Kind {
	case "number":
		a = strings.NewReplacer(",", "", " ", "", "_", "").Replace(a)
		n, err := strconv.ParseUint(a, 10, 64)
		want, _ := strconv.ParseUint(q.Answer, 10, 64)
		return err == nil && n == want
	case "yesno":
		a = strings.ToLower(a)
		return (a == "yes" || a == "y") && q.Answer == "yes" || (a == "no" || a == "n") && q.Answer == "no"
	}
	return strings.EqualFold(a, q.Answer)
}

// quizBuilder collects, during Build's pass, what the questions need: when each chunk starts and
// ends and which segments each chunk's calls touch.
type quizBuilder struct {
	o          *Outline
	chunkEnter []int64
	chunkEnd   []int64
	chunkSegs  map[int32][]uint32
	last       int // the last mode's engine index
}

func newQuizBuilder(o *Outline) *quizBuilder {
	return &quizBuilder{o: o, chunkSegs: map[int32][]uint32{}, last: len(o.spec.Modes) - 1}
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
		s.Question = qs
	}
}

// question makes the stop's question, or nil.
func (q *quizBuilder) question(s *Stop, lastMode core.Mode) *Question {
	num := func(text string, v uint64, ask int64) *Question {
		return &Question{Kind: "number", Text: text, Answer: strconv.FormatUint(v, 10), Ask: ask, Reveal: s.Step, chunk: -1}
	}
	yesno := func(text string, yes bool) *Question {
		a := "no"
		if yes {
			a = "yes"
		}
		return &Question{Kind: "yesno", Text: text, Answer: a, Ask: max(s.Step-1, 0), Reveal: s.Step, chunk: -1}
	}
	chunk := q.o.chunkAt(s.Slot)
	switch s.Kind {
	case StopReserve:
		if ev, ok := q.eventOf(s); ok {
			return num("How many of this chunk's NULL_ADDR slots will f2fs_reserve_new_blocks turn into NEW_ADDR?", uint64(ev.Len), max(s.Step-1, 0))
		}
	case StopNewInRun:
		return yesno(fmt.Sprintf("Slot %s holds NEW_ADDR while the batched mode has a run pending. Does this slot end the pending run?", units.Group(s.Slot)), false)
	case StopDiscontiguous:
		return yesno(fmt.Sprintf("The batched mode has a run pending, and slot %s holds an address that is not blkstart+blklen. Does slot %s end the pending run?", units.Group(s.Slot), units.Group(s.Slot)), true)
	case StopError:
		if ev, ok := q.eventOf(s); ok && (ev.Action == core.ActSITBit || ev.Action == core.ActBounds) {
			return yesno(fmt.Sprintf("Slot %s holds block %s. Will f2fs_is_valid_blkaddr accept it?", units.Group(s.Slot), units.Group(ev.Addr)), false)
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
		return &Question{Kind: "choice", Text: "This chunk's calls will empty one segment. Which segment becomes prefree next?",
			Choices: choices, Answer: strconv.FormatUint(uint64(ev.Segno), 10), Ask: q.chunkEnter[chunk], Reveal: s.Step, chunk: -1}
	}
	return nil
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
