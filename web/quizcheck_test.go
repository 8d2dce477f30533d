package web

import (
	"flag"
	"testing"

	"github.com/zrviz/zrviz/player"
)

var writeAnswerVectors = flag.Bool("answer-vectors", false, "write static/jstest/testdata/answers.json (the node test of quiz.js's checkAnswer reads it)")

func TestCheckAnswer(t *testing.T) {
	num := &player.Question{Kind: "number", Answer: "19"}
	yn := &player.Question{Kind: "yesno", Answer: "no"}
	ch := &player.Question{Kind: "choice", Choices: []string{"4", "5", "59"}, Answer: "59"}
	for _, tt := range []struct {
		q    *player.Question
		ans  string
		want string // the form counted; "" for a refused answer
	}{
		{num, "19", "19"}, {num, " 16,384 ", "16384"}, {num, "0", "0"}, {num, "16385", ""}, {num, "abc", ""}, {num, "-1", ""}, {num, "", ""},
		{num, "18446744073709551616", ""},
		{yn, "No", "no"}, {yn, "y", "yes"}, {yn, "maybe", ""},
		{ch, "59", "59"}, {ch, "4", "4"}, {ch, "60", ""}, {ch, "abc", ""},
	} {
		got, err := checkAnswer(tt.q, tt.ans, 16384)
		if (err == nil) != (tt.want != "") || got != tt.want {
			t.Errorf("checkAnswer(%s, %q) = %q, %v; want %q", tt.q.Kind, tt.ans, got, err, tt.want)
		}
	}
}

// TestAnswerReadersAgree: the three places that read an answer — the refusal of a slip
// (checkAnswer, before a session's or a room's answer counts), the room's count key (what
// checkAnswer returns, stored by room.answer) and the verdict (Question.Check, on the raw answer
// in a session, on the stored key at a room's reveal) — agree on every answer: a refused answer
// is never right, a follower's verdict is the one a lone player gets for the same words, answers
// meaning the same share one key, and the right answer's key is the Answer the presenter's page
// looks its count up by (static/js/room.js).
func TestAnswerReadersAgree(t *testing.T) {
	const slots = 20000
	for _, tt := range []struct {
		q       *player.Question
		answers [][]string // groups of answers that mean the same; the first group is right
	}{
		{&player.Question{Kind: "number", Answer: "16384"}, [][]string{
			{"16384", " 16,384", "16_384 ", "16 384", "016384", "\t16384\n"},
			{"0", "000", "0,000"}, {"19", "1,9", "019"}, {"20000", "20,000"},
			{"20001"}, {"abc"}, {"-1"}, {""}, {"1.5"}, {"99999999999999999999"},
		}},
		{&player.Question{Kind: "yesno", Answer: "yes"}, [][]string{
			{"yes", "Y", " YES ", "y"}, {"no", "N", "No"}, {"maybe"}, {""}, {"yess"},
		}},
		{&player.Question{Kind: "choice", Choices: []string{"a valid block", "outside the main area", "Its SIT bit is clear"}, Answer: "Its SIT bit is clear"}, [][]string{
			{"Its SIT bit is clear", "its sit bit is clear", " ITS SIT BIT IS CLEAR "},
			{"a valid block", "A Valid Block"}, {"valid"}, {""},
		}},
	} {
		for g, group := range tt.answers {
			var key string
			for i, a := range group {
				norm, err := checkAnswer(tt.q, a, slots)
				lone := tt.q.Check(a)
				if err != nil {
					if lone || g == 0 {
						t.Errorf("%s: %q refused (%v) but Check says %v", tt.q.Kind, a, err, lone)
					}
					continue
				}
				if follower := tt.q.Check(norm); follower != lone || lone != (g == 0) {
					t.Errorf("%s: %q: a lone player's verdict %v, a follower's (key %q) %v; want %v", tt.q.Kind, a, lone, norm, follower, g == 0)
				}
				if i == 0 {
					key = norm
				} else if norm != key {
					t.Errorf("%s: %q counts as %q, %q as %q: they mean the same", tt.q.Kind, group[0], key, a, norm)
				}
				if g == 0 && norm != tt.q.Answer {
					t.Errorf("%s: the right answer %q counts as %q, not as the Answer %q", tt.q.Kind, a, norm, tt.q.Answer)
				}
			}
		}
	}
}

// TestAnswerVectors: static/jstest/testdata/answers.json is what the server makes of answers —
// taken, in the form it counts, or refused — so the page's own check before it sends one
// (static/js/quiz.js checkAnswer, which spares the student a round trip) is held to the same
// cases by its node test. It fails when the file is stale; -answer-vectors rewrites it.
func TestAnswerVectors(t *testing.T) {
	type question struct {
		Kind    string   `json:"kind"`
		Choices []string `json:"choices,omitempty"`
	}
	type vector struct {
		Question question `json:"question"`
		Answer   string   `json:"answer"`
		Max      uint64   `json:"max"`
		Value    *string  `json:"value"` // null: refused
	}
	qs := []*player.Question{
		{Kind: "number", Answer: "19"},
		{Kind: "yesno", Answer: "no"},
		{Kind: "choice", Choices: []string{"4", "5", "59", "6"}, Answer: "59"},
		{Kind: "choice", Choices: []string{"a valid block", "outside the main area", "its SIT bit is clear"}, Answer: "a valid block"},
	}
	answers := []string{"19", " 16,384 ", "1_000", "16 384", "16\u00a0384", "16\t384", "0", "000", "0019", "16384", "16385",
		"99999999999999999999", "-1", "+1", "1.5", "0x10", "12a", "abc", "", "  ", ",",
		"yes", "Yes", " NO ", "y", "N", "maybe", "4", "59", "60", "Outside The Main Area", "its sit bit is clear", "valid"}
	var vs []vector
	for _, q := range qs {
		for _, a := range answers {
			v := vector{Question: question{Kind: q.Kind, Choices: q.Choices}, Answer: a, Max: 16384}
			if norm, err := checkAnswer(q, a, v.Max); err == nil {
				v.Value = &norm
			}
			vs = append(vs, v)
		}
	}
	checkVectors(t, "../static/jstest/testdata/answers.json", map[string]any{"comment": "written by go test ./web -run TestAnswerVectors -answer-vectors", "vectors": vs},
		*writeAnswerVectors, "go test ./web -run TestAnswerVectors -answer-vectors")
}
