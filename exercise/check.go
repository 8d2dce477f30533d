package exercise

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/player"
)

// MaxAnswerLen bounds an answer read: no answer of an exercise is longer than a few characters.
const MaxAnswerLen = 64

// quiz is q as the player's quiz asks it: a choice question when it lists choices, yes/no when its
// answer is yes or no, else a number. Its Normalise is the one reading of answers zrviz has.
func (q Question) quiz() player.Question {
	switch {
	case q.Choices != nil:
		return player.Question{Kind: "choice", Text: q.Text, Choices: q.Choices, Answer: q.Answer}
	case q.Answer == "yes" || q.Answer == "no":
		return player.Question{Kind: "yesno", Text: q.Text, Answer: q.Answer}
	}
	return player.Question{Kind: "number", Text: q.Text, Answer: q.Answer}
}

// Check reports whether answer is the engine's answer, read as the player's quiz reads answers
// ([player.Question.Normalise]: "16 384" and "16,384" are 16384, y is yes, a choice in any case).
// An answer the question cannot take ("abc" for a number) is a *player.AnswerError, neither right
// nor wrong.
func (q Question) Check(answer string) (bool, error) {
	if len(answer) > MaxAnswerLen {
		return false, &player.AnswerError{Answer: answer[:MaxAnswerLen], Hint: fmt.Sprintf("an answer is at most %d characters", MaxAnswerLen)}
	}
	pq := q.quiz()
	a, err := pq.Normalise(answer)
	if err != nil {
		return false, err
	}
	return a == q.Answer, nil
}

// Verdict is one answer checked.
type Verdict struct {
	Answer   string `json:"answer"`   // as given
	Answered bool   `json:"answered"` // a non-empty answer the question takes
	Right    bool   `json:"right"`
	Hint     string `json:"hint,omitempty"` // why the answer cannot be read, for the student
}

// Score is a set of answers checked: Right of Answered, as the player's quiz scores ("2 of 3
// right"); an empty answer is not counted, and one that cannot be read is counted as given but
// not right, and named (Unreadable), so "4 of 5 right, one unreadable" never reads "4 of 4".
type Score struct {
	Verdicts []Verdict `json:"verdicts"` // one per question, in order
	Right    int       `json:"right"`
	Answered int       `json:"answered"`
	// Unreadable are the questions (numbered from 1) whose answer was given but cannot be read.
	Unreadable []int `json:"unreadable"`
}

// Given is the answers given: the readable ones and the unreadable.
func (s Score) Given() int { return s.Answered + len(s.Unreadable) }

// String is "2 of 3 right", and with answers that cannot be read "4 of 5 right, one unreadable
// (question 3)" or "3 of 5 right, 2 unreadable (questions 2 and 5)".
func (s Score) String() string {
	out := fmt.Sprintf("%d of %d right", s.Right, s.Given())
	switch n := len(s.Unreadable); n {
	case 0:
	case 1:
		out += fmt.Sprintf(", one unreadable (question %d)", s.Unreadable[0])
	default:
		qs := make([]string, n)
		for i, q := range s.Unreadable {
			qs[i] = strconv.Itoa(q)
		}
		out += fmt.Sprintf(", %d unreadable (questions %s and %s)", n, strings.Join(qs[:n-1], ", "), qs[n-1])
	}
	return out
}

// Check checks answers against the questions, in order; answers past the last question are
// ignored and missing ones are empty.
func (e *Exercise) Check(answers []string) Score {
	var s Score
	for i, q := range e.Questions {
		v := Verdict{}
		if i < len(answers) {
			v.Answer = answers[i]
		}
		if v.Answer != "" {
			right, err := q.Check(v.Answer)
			if err != nil {
				s.Unreadable = append(s.Unreadable, i+1)
				v.Hint = err.Error()
				var ae *player.AnswerError
				if errors.As(err, &ae) {
					v.Hint = ae.Hint
				}
			} else {
				v.Answered, v.Right = true, right
				s.Answered++
				if right {
					s.Right++
				}
			}
		}
		s.Verdicts = append(s.Verdicts, v)
	}
	return s
}
