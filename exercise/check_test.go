package exercise

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/player"
)

// TestCheckReadsAnswersAsTheQuiz: for the questions of many seeds of both kinds, the engine's
// answer is right however a student writes it as the player's quiz takes it (separators, space,
// leading zeros, case, y/n), another answer is wrong, and what the question cannot take is an
// AnswerError, neither; a random sheet of answers scores what is counted here, one by one.
func TestCheckReadsAnswersAsTheQuiz(t *testing.T) {
	img := demo(t)
	rng := rand.New(rand.NewPCG(30, 3))
	kinds := map[string]bool{}
	for seed := range uint64(40) {
		for _, k := range []Kind{Slots, File} {
			e, err := New(seed, k, img, "")
			if err != nil {
				t.Fatal(err)
			}
			answers := make([]string, len(e.Questions))
			wantRight, wantAnswered := 0, 0
			var wantUnreadable []int
			for i, q := range e.Questions {
				kind := q.quiz().Kind
				kinds[kind] = true
				for _, a := range spellings(q, kind) {
					if ok, err := q.Check(a); !ok || err != nil {
						t.Errorf("seed %d %s %q (answer %s): %q is %v, %v; want right", seed, k, q.Text, q.Answer, a, ok, err)
					}
				}
				other := otherAnswer(q, kind)
				if ok, err := q.Check(other); ok || err != nil {
					t.Errorf("seed %d %q (answer %s): %q is %v, %v; want wrong", seed, q.Text, q.Answer, other, ok, err)
				}
				var ae *player.AnswerError
				if _, err := q.Check("zz top"); !errors.As(err, &ae) || ae.Hint == "" {
					t.Errorf("seed %d %q: an answer it cannot take gives %v, want an AnswerError with a hint", seed, q.Text, err)
				}
				switch rng.IntN(4) {
				case 0: // left empty
				case 1:
					answers[i] = spellings(q, kind)[rng.IntN(len(spellings(q, kind)))]
					wantRight++
					wantAnswered++
				case 2:
					answers[i] = other
					wantAnswered++
				case 3:
					answers[i] = "zz top"
					wantUnreadable = append(wantUnreadable, i+1)
				}
			}
			s := e.Check(answers)
			if s.Right != wantRight || s.Answered != wantAnswered || len(s.Verdicts) != len(e.Questions) {
				t.Errorf("seed %d %s: %v (%d verdicts), want %d of %d right", seed, k, s, len(s.Verdicts), wantRight, wantAnswered)
			}
			if !slices.Equal(s.Unreadable, wantUnreadable) {
				t.Errorf("seed %d %s: unreadable %v, want %v", seed, k, s.Unreadable, wantUnreadable)
			}
			want := strconv.Itoa(wantRight) + " of " + strconv.Itoa(wantAnswered+len(wantUnreadable)) + " right"
			switch len(wantUnreadable) {
			case 0:
			case 1:
				want += fmt.Sprintf(", one unreadable (question %d)", wantUnreadable[0])
			default:
				want += fmt.Sprintf(", %d unreadable (questions ", len(wantUnreadable))
			}
			if !strings.HasPrefix(s.String(), want) {
				t.Errorf("score %q, want %q", s, want)
			}
		}
	}
	for _, k := range []string{"number", "yesno", "choice"} {
		if !kinds[k] {
			t.Errorf("no %s question in 40 seeds: the test covers less than it says", k)
		}
	}
	if _, err := (Question{Answer: "7"}).Check(strings.Repeat("7", MaxAnswerLen+1)); err == nil {
		t.Error("an answer over MaxAnswerLen was read")
	}
}

// spellings are ways a student may write q's answer that mean it.
func spellings(q Question, kind string) []string {
	switch kind {
	case "number":
		n, _ := strconv.ParseUint(q.Answer, 10, 64)
		grouped := strconv.FormatUint(n, 10)
		if n >= 1000 {
			grouped = strconv.FormatUint(n/1000, 10) + "," + strings.Repeat("0", 3-len(strconv.FormatUint(n%1000, 10))) + strconv.FormatUint(n%1000, 10)
		}
		return []string{q.Answer, " " + q.Answer + " ", "0" + q.Answer, grouped}
	case "yesno":
		return []string{q.Answer, strings.ToUpper(q.Answer), q.Answer[:1]}
	}
	return []string{q.Answer, strings.ToUpper(q.Answer), " " + q.Answer}
}

// otherAnswer is an answer q takes that is not its answer.
func otherAnswer(q Question, kind string) string {
	switch kind {
	case "number":
		n, _ := strconv.ParseUint(q.Answer, 10, 64)
		return strconv.FormatUint(n+1, 10)
	case "yesno":
		if q.Answer == "yes" {
			return "no"
		}
		return "yes"
	}
	for _, c := range q.Choices {
		if c != q.Answer {
			return c
		}
	}
	return ""
}
