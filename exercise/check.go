package exercise

import (
	"errors"
	"fmt"

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
// right"); an empty answer or one that cannot be read is not counted.
type Score struct {
	Verdicts []Verdict `json:"verdicts"` // one per question, in order
	Right    int       `json:"right"`
	Answered int       `json:"answered"`
}

// String is "2 of 3 right".
func (s Score) String() string { return fmt.Sprintf("%d of %d right", s.Right, s.Answered) }

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
