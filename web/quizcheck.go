package web

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/player"
)

// checkAnswer refuses an answer the question cannot take, before it counts (issue 20; the page's
// static/js/quiz.js checks the same first): a yes/no must be yes, no, y or n; a choice one of the
// choices; a number a whole number, separators allowed, no larger than the run's slots (every
// count a question asks for — calls, slots reserved — is at most that).
func checkAnswer(q *player.Question, ans string, slots uint64) error {
	a := strings.ToLower(strings.TrimSpace(ans))
	switch q.Kind {
	case "number":
		n, err := strconv.ParseUint(strings.NewReplacer(",", "", " ", "", "_", "").Replace(a), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", ans)
		}
		if n > slots {
			return fmt.Errorf("%d is more than the run's %d slots", n, slots)
		}
	case "yesno":
		if !slices.Contains([]string{"yes", "no", "y", "n"}, a) {
			return fmt.Errorf("%q: answer yes or no", ans)
		}
	default:
		if !slices.ContainsFunc(q.Choices, func(c string) bool { return strings.EqualFold(c, a) }) {
			return fmt.Errorf("%q is not one of the choices %s", ans, strings.Join(q.Choices, ", "))
		}
	}
	return nil
}
