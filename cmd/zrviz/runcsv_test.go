package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRunCSVRowsAreTheCalls: `zrviz run --csv` prints a header and one row per call of each mode,
// the calls `zrviz run --json` lists.
func TestRunCSVRowsAreTheCalls(t *testing.T) {
	args := []string{"run", "--mode", "both", "/cases/fragmented.bin"}
	var run struct {
		Results []struct {
			Mode  string      `json:"mode"`
			Calls [][2]uint32 `json:"calls"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, append(args, "--json")...)), &run); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(mustRunMain(t, append(args, "--csv")...))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"mode", "index", "start", "len"}}
	for _, r := range run.Results {
		for i, c := range r.Calls {
			want = append(want, []string{r.Mode, fmt.Sprint(i + 1), fmt.Sprint(c[0]), fmt.Sprint(c[1])})
		}
	}
	if len(want) < 3 || fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("--csv printed %d rows, want %d (a header and the --json run's calls)", len(rows), len(want))
	}
	var ue usageError
	for _, bad := range [][]string{{"run", "--csv", "--json", "/cases/fragmented.bin"}, {"run", "--csv", "--ops", "x.ops"}} {
		if _, err := runMain(t, bad...); !errors.As(err, &ue) {
			t.Errorf("zrviz %s: %v, want a usage error", strings.Join(bad, " "), err)
		}
	}
}
