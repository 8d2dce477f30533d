package web

import (
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/player"
)

// The server keeps the answer (issue 38). With the quiz on — quiz=1 on /ws/run, or the room's
// quiz (the presenter's "ui" control) — a session is held at its first question not yet answered
// (solo) or revealed (room): no frame goes past the question's ask step, whatever the client asks
// for (play, step, seek, End, nextCall, gotoSlot, a mode change, a step in the URL), and the hello
// and the "hold" message carry nothing from which the open question's answer follows: no stop at
// or after the open question's (the open one only by its question, whose stop step and reveal are
// its ask step), no calls of a chunk some mode is still in at the ask step, no slider marker past
// it, no outcome and no attached kernel trace. The page's veil (static/js/quiz.js) still hides
// what the state at the ask step shows; what the page never gets it cannot show.

// quizHold is where a quiz holds a view: the first stop (by index; the questions of a tour come in
// step order and never overlap) whose question is not done.
type quizHold struct {
	Stop      int   `json:"stop"`      // the open question's stop
	Ask       int64 `json:"ask"`       // the step it is asked at: no view goes past it
	Questions int   `json:"questions"` // the tour's questions, the withheld ones too
}

// holdOf returns where a quiz holds o's view with the questions done, or nil (no quiz, or every
// question done).
func holdOf(o *player.Outline, quiz bool, done map[int]bool) *quizHold {
	if !quiz {
		return nil
	}
	var h *quizHold
	n := 0
	for k, s := range o.Stops {
		if s.Question == nil {
			continue
		}
		n++
		if h == nil && !done[k] {
			h = &quizHold{Stop: k, Ask: s.Question.Ask}
		}
	}
	if h != nil {
		h.Questions = n
	}
	return h
}

// holdMsg replaces what a client holds of the run's answers when a hold moves (an answer, a
// reveal, the quiz turned on or off): the stops, chunks, markers and outcome as a hello at hold
// would carry them.
type holdMsg struct {
	V              int             `json:"v"`
	Type           string          `json:"type"`
	Hold           *quizHold       `json:"hold"` // null: nothing is withheld any more
	Stops          []wireStop      `json:"stops"`
	Chunks         []player.Chunk  `json:"chunks"`
	Markers        []player.Marker `json:"markers"`
	MarkersThinned bool            `json:"markersThinned"`
	Outcome        player.Outcome  `json:"outcome"`
}

// heldParts returns o's stops, chunks, markers and outcome as a client held at h may see them (h nil:
// all of them).
func heldParts(o *player.Outline, h *quizHold) ([]wireStop, []player.Chunk, []player.Marker, player.Outcome) {
	stops := wireStops(o.Stops)
	if h == nil {
		return stops, o.Chunks, o.Markers, o.Outcome()
	}
	// The stops before the open question's stand; the open one shows only its question, asked at
	// its ask step; the later ones are not sent (their steps, slots and words would tell).
	stops = stops[:h.Stop+1]
	s := &stops[h.Stop]
	q := *s.Question
	q.Reveal = q.Ask
	s.Stop = player.Stop{Step: q.Ask, Terms: []string{}}
	s.Question = &q
	s.Withheld = true
	chunks := make([]player.Chunk, len(o.Chunks))
	for i, c := range o.Chunks {
		if c.End < 0 || c.End > h.Ask {
			c.Calls = nil // null: withheld
		}
		chunks[i] = c
	}
	markers := make([]player.Marker, 0, len(o.Markers))
	for _, m := range o.Markers {
		if m.Step <= h.Ask {
			markers = append(markers, m)
		}
	}
	return stops, chunks, markers, player.Outcome{}
}

// withholdHello applies hold h to a hello (h nil: it is left whole).
func withholdHello(hm *helloMsg, o *player.Outline, h *quizHold) {
	hm.Hold = h
	if h == nil {
		return
	}
	hm.Stops, hm.Chunks, hm.Markers, hm.Outcome = heldParts(o, h)
	hm.Trace, hm.Kernel = nil, nil
	veilNarration(hm.State, hm.Step, h)
}

// veilNarration blanks the narration of a state shown at the hold's ask step: it may say what the
// kernel does next.
func veilNarration(st []player.ModeState, step int64, h *quizHold) {
	if h == nil || step < h.Ask {
		return
	}
	for i := range st {
		st[i].Narration = ""
	}
}

// newHoldMsg is the hold message for o at h.
func newHoldMsg(o *player.Outline, h *quizHold) *holdMsg {
	m := &holdMsg{V: protocolVersion, Type: "hold", Hold: h, MarkersThinned: o.Thinned}
	m.Stops, m.Chunks, m.Markers, m.Outcome = heldParts(o, h)
	return m
}

// parseAnswered reads answered=0,3,7 (the stops a reloaded page has its verdicts for): they are
// done, unscored, so the page is not held at a question it has answered. Anything else in it is
// ignored; at most one entry per stop counts.
func parseAnswered(v string, o *player.Outline) map[int]bool {
	done := map[int]bool{}
	if v == "" {
		return done
	}
	for i, f := range strings.Split(v, ",") {
		if i >= len(o.Stops) {
			break
		}
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil && k >= 0 && k < len(o.Stops) && o.Stops[k].Question != nil {
			done[k] = true
		}
	}
	return done
}

// allQuestions returns every question of o: a view that comes to o with nothing held (a mode
// change once the quiz is over) has shown all of the run.
func allQuestions(o *player.Outline) map[int]bool {
	done := map[int]bool{}
	for k, s := range o.Stops {
		if s.Question != nil {
			done[k] = true
		}
	}
	return done
}

// errQuizMode refuses a mode change while the quiz holds the view.
var errQuizMode = controlError("the quiz is on: the other mode would show this run's answers; answer its questions, or turn the quiz off, then change the mode")

// pastQuestions returns the questions of o asked before step.
func pastQuestions(o *player.Outline, step int64) map[int]bool {
	done := map[int]bool{}
	for k, s := range o.Stops {
		if s.Question != nil && s.Question.Ask < step {
			done[k] = true
		}
	}
	return done
}
