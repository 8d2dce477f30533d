package web

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/zrviz/zrviz/player"
)

// checkAnswer refuses an answer the question cannot take, before it counts (issue 20; the page's
// static/js/quiz.js checks the same first), and returns it as [player.Question.Normalise] writes
// it: a yes/no must be yes, no, y or n; a choice one of the choices; a number a whole number,
// separators allowed, no larger than the run's slots (every count a question asks for — calls,
// slots reserved — is at most that).
func checkAnswer(q *player.Question, ans string, slots uint64) (string, error) {
	a, err := q.Normalise(ans)
	if err != nil {
		var ae *player.AnswerError
		if errors.As(err, &ae) {
			err = errors.New(ae.Hint) // the student reads it, without the package's prefix
		}
		return "", err
	}
	if q.Kind == "number" {
		if n, _ := strconv.ParseUint(a, 10, 64); n > slots {
			return "", fmt.Errorf("%d is more than the run's %d slots", n, slots)
		}
	}
	return a, nil
}
