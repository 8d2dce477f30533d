package web

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRunCSV: ?format=csv answers the same calls as the JSON run, one row each, mode by mode.
func TestRunCSV(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	const q = "/api/images/demo/run?path=/cases/fragmented.bin&mode=both"
	var run struct {
		Results []struct {
			Mode  string      `json:"mode"`
			Calls [][2]uint32 `json:"calls"`
		} `json:"results"`
	}
	if code := ts.get(t, q, &run); code != 200 || len(run.Results) != 2 {
		t.Fatalf("JSON run: %d, %d results", code, len(run.Results))
	}
	resp, err := http.Get(ts.ts.URL + q + "&format=csv")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename=fragmented.bin-calls.csv` {
		t.Fatalf("CSV run: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var want [][]string
	want = append(want, []string{"mode", "index", "start", "len"})
	for _, r := range run.Results {
		for i, c := range r.Calls {
			want = append(want, []string{r.Mode, fmt.Sprint(i + 1), fmt.Sprint(c[0]), fmt.Sprint(c[1])})
		}
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("CSV has %d rows, want %d (the JSON run's calls and a header); first %v", len(rows), len(want), rows[:min(3, len(rows))])
	}
	if len(want) < 3 {
		t.Fatalf("fragmented.bin has %d calls: the test says nothing", len(want)-1)
	}

	var body errorBody
	if code := ts.get(t, q+"&format=xml", &body); code != 400 || !strings.Contains(body.Error, "format") {
		t.Errorf("format=xml: %d %q, want 400 naming format", code, body.Error)
	}
}

// TestNotFoundByAccept: a browser gets an HTML page with the site's links, the API and a client
// asking for JSON get the JSON error body; /favicon.ico is the site's icon.
func TestNotFoundByAccept(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	tests := []struct {
		path, accept, wantType, wantBody string
		code                             int
	}{
		{"/nope", browser, "text/html; charset=utf-8", `href="/glossary"`, 404},
		{"/nope", "", "application/json; charset=utf-8", `"error":"page \"/nope\" not found"`, 404},
		{"/nope", "application/json", "application/json; charset=utf-8", `"error"`, 404},
		{"/nope", "application/json, text/html;q=0.5", "application/json; charset=utf-8", `"error"`, 404},
		{"/api/nothing", browser, "application/json; charset=utf-8", `"error"`, 404},
		{"/favicon.ico", browser, "image/svg+xml", "<svg", 200},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.ts.URL+tt.path, nil)
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code || resp.Header.Get("Content-Type") != tt.wantType || !strings.Contains(string(b), tt.wantBody) {
				t.Errorf("%d %q %.200s; want %d %q containing %q", resp.StatusCode, resp.Header.Get("Content-Type"), b, tt.code, tt.wantType, tt.wantBody)
			}
			if tt.wantType == "text/html; charset=utf-8" && !strings.Contains(string(b), `<html lang="en">`) {
				t.Errorf("the 404 page has no lang")
			}
		})
	}
}
