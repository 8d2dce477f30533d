package player

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
)

// TestQuestionsAskBeforeTheStep: every question is asked while the page still shows the moment
// before what it asks about, and its text names what the page cannot show: at Ask the batched
// mode's pending run is the one the question names and the call has not been made, a rejected
// address is not rejected yet, the segment is not prefree yet, the chunk's calls are still to
// come; at Reveal the answer has happened. Random runs, every kind of question among them.
func TestQuestionsAskBeforeTheStep(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 18))
	kinds := map[string]int{}
	// Files of contiguous blocks that start inside a segment: their first chunk empties it (the
	// prefree question), in each mode combination.
	var specs []Spec
	for _, modes := range [][]core.Mode{{core.PerBlock}, {core.Batched}, {core.PerBlock, core.Batched}} {
		for _, first := range []uint32{4096 + 400, 4096 + 512*7 + 500} {
			slots := make([]uint32, 2500)
			for i := range slots {
				slots[i] = first + uint32(i)
			}
			specs = append(specs, fakeSpec(slots, modes, core.Request{Offset: 0, Length: 2500 * 4096}))
		}
	}
	// A block past the main area's end, which f2fs_is_valid_blkaddr refuses by its bounds.
	beyond := make([]uint32, 1200)
	for i := range beyond {
		beyond[i] = 4096 + 100 + uint32(i)
	}
	beyond[500] = 4096 + 512*40000 + 5
	specs = append(specs, fakeSpec(beyond, []core.Mode{core.PerBlock, core.Batched}, core.Request{Offset: 0, Length: 1200 * 4096}))
	for range 300 {
		specs = append(specs, randomSpec(r, 1+r.IntN(3000)))
	}
	errs := map[string]int{}
	for n, spec := range specs {
		o := build(t, spec)
		p, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		at := func(step int64) []ModeState {
			if err := p.Goto(step); err != nil {
				t.Fatal(err)
			}
			return p.State(&Tracker{}, true)
		}
		last := len(spec.Modes) - 1
		for _, s := range o.Stops {
			q := s.Question
			if q == nil {
				continue
			}
			kinds[s.Kind]++
			what := fmt.Sprintf("spec %d, %s question %q (ask %d, reveal %d)", n, s.Kind, q.Text, q.Ask, q.Reveal)
			if strings.Contains(strings.ToLower(q.Text), strings.ToLower(s.Title)) && s.Title != "" {
				t.Errorf("%s: the text repeats the stop's title %q", what, s.Title)
			}
			// Every question carries what the page withholds for its kind (issue 30), the later
			// steps always among it.
			if !slices.Equal(q.Withholds, Withholds(s.Kind)) || !slices.Contains(q.Withholds, WithholdLater) {
				t.Errorf("%s: withholds %v, want %v", what, q.Withholds, Withholds(s.Kind))
			}
			before, after := at(q.Ask), at(q.Reveal)
			bt, btAfter := before[last], after[last]
			// An error's question is about the mode that met it.
			mi := last
			for i, m := range spec.Modes {
				if m.String() == s.Mode {
					mi = i
				}
			}
			switch s.Kind {
			case StopNewInRun, StopDiscontiguous:
				if bt.Pending == nil {
					t.Fatalf("%s: no pending run at the ask step", what)
				}
				named := fmt.Sprintf("(blkstart %s, blklen %s)", units.Group(uint64(bt.Pending.Start)), units.Group(uint64(bt.Pending.Len)))
				if !strings.Contains(q.Text, named) {
					t.Errorf("%s: the page's pending run is %s", what, named)
				}
				flushed := btAfter.Counters.Calls > bt.Counters.Calls
				if flushed != (q.Answer == "yes") {
					t.Errorf("%s: answer %s, but between ask and reveal the batched mode made %d calls", what, q.Answer, btAfter.Counters.Calls-bt.Counters.Calls)
				}
			case StopError:
				if before[mi].Errno != "" || after[mi].Errno == "" {
					t.Errorf("%s: errno %q at ask, %q at reveal", what, before[mi].Errno, after[mi].Errno)
				}
				// The mode's error as the outline recorded it: a bound or a SIT bit.
				want := map[core.Action]string{core.ActBounds: choiceBounds, core.ActSITBit: choiceSITBit}[o.Errors[mi].Action]
				errs[want]++
				if q.Answer != want {
					t.Errorf("%s: the error is %v, the answer %q", what, o.Errors[mi].Action, q.Answer)
				}
			case StopPrefree:
				for _, sg := range before[0].Segments {
					if fmt.Sprint(sg.Segno) == q.Answer && sg.Class == core.SegPrefree {
						t.Errorf("%s: segment %s is prefree already at the ask step", what, q.Answer)
					}
				}
			case StopChunk, StopEndOfRange:
				if btAfter.Counters.Calls <= bt.Counters.Calls && q.Answer != "0" {
					t.Errorf("%s: no call between ask and reveal, answer %s", what, q.Answer)
				}
			case StopReserve:
				if grew := after[0].ValidBlocks - before[0].ValidBlocks; fmt.Sprint(grew) != q.Answer {
					t.Errorf("%s: valid_block_count grows by %d, the answer is %s", what, grew, q.Answer)
				}
			}
		}
	}
	if errs[choiceBounds] == 0 || errs[choiceSITBit] == 0 {
		t.Errorf("the validation questions' answers do not cover both rejections: %v", errs)
	}
	for _, k := range []string{StopNewInRun, StopDiscontiguous, StopError, StopPrefree, StopChunk, StopReserve} {
		if kinds[k] == 0 {
			t.Errorf("no %s question in the random runs: %v", k, kinds)
		}
	}
}

// TestNormalise covers what each former reader of answers handled (Question.Check, the room's
// count key, web's refusal of a slip): surrounding space, case, thousands separators of three
// kinds, leading zeros, y/n, choices in any case; and what none took: signs, letters in a number,
// an overflow, an empty answer, a choice not offered.
func TestNormalise(t *testing.T) {
	num := &Question{Kind: "number", Answer: "16384"}
	yn := &Question{Kind: "yesno", Answer: "no"}
	ch := &Question{Kind: "choice", Choices: []string{choiceValid, choiceBounds, "Segment 59"}, Answer: choiceBounds}
	for _, tt := range []struct {
		q    *Question
		in   string
		want string // "" for an answer the question cannot take
	}{
		{num, "16384", "16384"}, {num, " 16,384 ", "16384"}, {num, "16_384", "16384"}, {num, "16 384", "16384"},
		{num, "\t016384\n", "16384"}, {num, "16\u00a0384", "16384"}, {num, "16\t384", "16384"}, {num, "000", "0"}, {num, "0", "0"}, {num, "1,2,3", "123"},
		{num, "18446744073709551615", "18446744073709551615"},
		{num, "18446744073709551616", ""}, {num, "-1", ""}, {num, "+1", ""}, {num, "12a", ""}, {num, "abc", ""},
		{num, "", ""}, {num, " , ", ""}, {num, "1.5", ""}, {num, "0x10", ""},
		{yn, "no", "no"}, {yn, " No ", "no"}, {yn, "N", "no"}, {yn, "yes", "yes"}, {yn, "YES", "yes"}, {yn, "y", "yes"},
		{yn, "maybe", ""}, {yn, "yess", ""}, {yn, "", ""}, {yn, "0", ""},
		{ch, "outside the main area", choiceBounds}, {ch, " Outside The Main Area ", choiceBounds},
		{ch, "segment 59", "Segment 59"}, {ch, "59", ""}, {ch, "a valid", ""}, {ch, "", ""},
	} {
		got, err := tt.q.Normalise(tt.in)
		var ae *AnswerError
		switch {
		case tt.want == "" && !errors.As(err, &ae):
			t.Errorf("%s question: Normalise(%q) = %q, %v; want an *AnswerError", tt.q.Kind, tt.in, got, err)
		case tt.want == "" && (ae.Answer != tt.in || ae.Hint == ""):
			t.Errorf("%s question: Normalise(%q)'s error %+v does not name the answer with a hint", tt.q.Kind, tt.in, ae)
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("%s question: Normalise(%q) = %q, %v; want %q", tt.q.Kind, tt.in, got, err, tt.want)
		}
		// Normalising twice changes nothing, and the verdict is the normalised form against the
		// Answer: the room judges the form it stored, the player the raw answer.
		if err == nil {
			if again, err2 := tt.q.Normalise(got); err2 != nil || again != got {
				t.Errorf("%s question: Normalise(%q) = %q, %v; want it unchanged", tt.q.Kind, got, again, err2)
			}
		}
		if right := tt.want != "" && tt.want == tt.q.Answer; tt.q.Check(tt.in) != right || (err == nil && tt.q.Check(got) != right) {
			t.Errorf("%s question: Check(%q) = %v, Check(%q) = %v; want %v", tt.q.Kind, tt.in, tt.q.Check(tt.in), got, tt.q.Check(got), right)
		}
	}
}

// TestWithholds: what a question withholds follows from what its answer depends on. Every question
// holds the view at its ask step and hides the parts of the page that count calls, SIT changes and
// what the kernel does next; a question about runs (does this slot end the pending run, how many
// calls) hides the physical runs too, and one about segments and addresses (which segment becomes
// prefree, what validation finds) the segments. A stop with no question withholds nothing.
func TestWithholds(t *testing.T) {
	base := []string{WithholdLater, WithholdNarration, WithholdCalls, WithholdCounters, WithholdSIT, WithholdStop}
	for _, c := range []struct {
		kind           string
		runs, segments bool
	}{
		{StopReserve, false, false},
		{StopNewInRun, true, false}, {StopDiscontiguous, true, false}, {StopChunk, true, false}, {StopEndOfRange, true, false},
		{StopPrefree, false, true}, {StopError, false, true},
	} {
		w := Withholds(c.kind)
		for _, b := range base {
			if !slices.Contains(w, b) {
				t.Errorf("%s: withholds %v, without %q", c.kind, w, b)
			}
		}
		if slices.Contains(w, WithholdRuns) != c.runs || slices.Contains(w, WithholdSegments) != c.segments {
			t.Errorf("%s: withholds %v; want runs %v, segments %v", c.kind, w, c.runs, c.segments)
		}
	}
	for _, k := range []string{StopStart, StopEnd, StopSITUpdate, StopFillZero} {
		if w := Withholds(k); w != nil {
			t.Errorf("%s has no question but withholds %v", k, w)
		}
	}
}
