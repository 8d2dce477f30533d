package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/sandbox"
)

func TestSandboxCommand(t *testing.T) {
	out := mustRunMain(t, "sandbox", "34304-34815 NEW*3 34816 | 6144-6200 NULL 9000")
	for _, want := range []string{"575 slots (571 addresses, 3 NEW, 1 NULL)", "f2fs_invalidate_blocks calls", "f2fs_invalidate_blocks(34304, 513)   end of dnode chunk",
		"f2fs_invalidate_blocks(6144, 57)   next address not contiguous"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Several words are one list; --mode after the list.
	var got struct {
		Slots   string `json:"slots"`
		Results []struct {
			Mode  string         `json:"mode"`
			Errno string         `json:"errno"`
			Calls [][2]uint32    `json:"calls"`
			Stats map[string]any `json:"stats"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, "sandbox", "--json", "7201", "7200", "7201", "--mode", "batched")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Slots != "7201 7200-7201" || len(got.Results) != 1 || got.Results[0].Mode != "batched" ||
		got.Results[0].Errno != "EFSCORRUPTED" || len(got.Results[0].Calls) != 2 || got.Results[0].Calls[1] != [2]uint32{7200, 1} {
		t.Errorf("spec row 8 batched: %+v", got)
	}
	for _, args := range [][]string{{"sandbox"}, {"sandbox", "7200 NEW*x"}, {"sandbox", "--mode", "fast", "7200"}} {
		_, err := runMain(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("zrviz %q: %v, want a usage error", args, err)
		}
	}
	if _, err := runMain(t, "sandbox", "7200 NEW*x"); err == nil || !strings.Contains(err.Error(), `token 2 "NEW*x" at byte 5`) {
		t.Errorf("syntax error %v does not name the token and its position", err)
	}
}

func TestExerciseCommand(t *testing.T) {
	a := mustRunMain(t, "exercise", "--seed", "7")
	if b := mustRunMain(t, "exercise", "--seed", "7"); a != b {
		t.Error("the same seed printed two exercises")
	}
	if strings.Contains(a, "Answer:") || !strings.Contains(a, "Run with -c") {
		t.Errorf("answers shown without -c:\n%s", a)
	}
	if c := mustRunMain(t, "exercise", "--seed", "7", "-c"); !strings.Contains(c, "Answer: ") {
		t.Errorf("-c shows no answers:\n%s", c)
	}
	var got struct {
		Seed      uint64 `json:"seed"`
		Kind      string `json:"kind"`
		Path      string `json:"path"`
		Length    int64  `json:"length"`
		Questions []struct{ Text, Answer string }
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, "exercise", "--seed", "3", "--kind", "file", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Seed != 3 || got.Kind != "file" || got.Path == "" || got.Length <= 0 || len(got.Questions) < 3 || got.Questions[0].Answer == "" {
		t.Errorf("exercise --json: %+v", got)
	}
	for _, args := range [][]string{{"exercise", "--seed", "-1"}, {"exercise", "--kind", "disk"}, {"exercise", "extra"},
		{"exercise", "--image", "x.img"}} {
		_, err := runMain(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("zrviz %q: %v, want a usage error", args, err)
		}
	}
}

// The streamed JSON is byte for byte what json.Encoder writes.
func TestSandboxJSONStreamed(t *testing.T) {
	for _, slots := range []string{"7201 7200 7201", "34304-34815 NEW*3 34816 | 6144-6200 NULL 9000", "NEW NEW", "100"} {
		l, err := sandbox.Parse(slots)
		if err != nil {
			t.Fatal(err)
		}
		out, err := sandbox.Simulate(l, request.Both())
		if err != nil {
			t.Fatal(err)
		}
		var want, got bytes.Buffer
		if err := json.NewEncoder(&want).Encode(out); err != nil {
			t.Fatal(err)
		}
		if err := writeSandboxJSON(&got, out); err != nil {
			t.Fatal(err)
		}
		if g, w := got.Bytes(), want.Bytes(); !bytes.Equal(g, w) {
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			t.Errorf("%q: %d bytes, want %d; they differ at byte %d: %.80q vs %.80q", slots, len(g), len(w), i, g[i:], w[i:])
		}
	}
}

// TestExerciseWithoutSeed: without --seed each run picks a seed and prints it; that seed gives the
// same exercise again.
func TestExerciseWithoutSeed(t *testing.T) {
	out := mustRunMain(t, "exercise")
	m := regexp.MustCompile(`^zrviz exercise --seed (\d+) --kind slots\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("exercise without --seed printed %.80q, want its seed first", out)
	}
	if again := mustRunMain(t, "exercise", "--seed", m[1]); again != out {
		t.Errorf("--seed %s gave another exercise than the one it was printed with", m[1])
	}
	if out2 := mustRunMain(t, "exercise"); out2 == out {
		t.Errorf("two runs without --seed gave the same exercise (seed %s twice)", m[1])
	}
}
