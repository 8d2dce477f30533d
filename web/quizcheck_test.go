package web

import (
	"testing"

	"github.com/zrviz/zrviz/player"
)

func TestCheckAnswer(t *testing.T) {
	num := &player.Question{Kind: "number", Answer: "19"}
	yn := &player.Question{Kind: "yesno", Answer: "no"}
	ch := &player.Question{Kind: "choice", Choices: []string{"4", "5", "59"}, Answer: "59"}
	for _, tt := range []struct {
		q    *player.Question
		ans  string
		good bool
	}{
		{num, "19", true}, {num, " 16,384 ", true}, {num, "0", true}, {num, "16385", false}, {num, "abc", false}, {num, "-1", false}, {num, "", false},
		{yn, "No", true}, {yn, "y", true}, {yn, "maybe", false},
		{ch, "59", true}, {ch, "4", true}, {ch, "60", false}, {ch, "abc", false},
	} {
		if err := checkAnswer(tt.q, tt.ans, 16384); (err == nil) != tt.good {
			t.Errorf("checkAnswer(%s, %q) = %v, want ok=%v", tt.q.Kind, tt.ans, err, tt.good)
		}
	}
}
