package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/exercise"
	"github.com/zrviz/zrviz/sandbox"
)

// postSandbox posts body to /api/sandbox and decodes the answer into v.
func (ts *testServer) postSandbox(tb testing.TB, body string, v any) int {
	tb.Helper()
	res, err := http.Post(ts.ts.URL+"/api/sandbox", "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("POST /api/sandbox %.200s: %d %.300q: %v", body, res.StatusCode, b, err)
	}
	return res.StatusCode
}

type sandboxAnswer struct {
	Slots   string `json:"slots"`
	Offset  int64  `json:"offset"`
	Length  int64  `json:"length"`
	Layout  []sandbox.Group
	Results []struct {
		Mode         string      `json:"mode"`
		Errno        string      `json:"errno"`
		Calls        [][2]uint32 `json:"calls"`
		CallsOmitted uint64      `json:"callsOmitted"`
		Stats        struct {
			Calls       uint64 `json:"calls"`
			DnodeChunks uint64 `json:"dnodeChunks"`
		} `json:"stats"`
		Segments []struct {
			Segno uint32 `json:"segno"`
			Class string `json:"class"`
		} `json:"segments"`
		SegmentsOmitted int `json:"segmentsOmitted"`
		After           struct {
			Extents []core.Extent `json:"extents"`
		} `json:"after"`
	} `json:"results"`
	Permalink bool   `json:"permalink"`
	Player    string `json:"player"`
	Page      string `json:"page"`
	Error     string `json:"error"`
	Pos       int    `json:"pos"`
	Index     int    `json:"index"`
	Token     string `json:"token"`
}

func TestSandboxAPI(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	body := func(slots, mode string) string {
		b, _ := json.Marshal(map[string]string{"slots": slots, "mode": mode})
		return string(b)
	}

	t.Run("both modes", func(t *testing.T) {
		var got sandboxAnswer
		if code := ts.postSandbox(t, body("34304-34815 NEW*3 34816 | 6144-6200 NULL 9000", ""), &got); code != 200 {
			t.Fatalf("status %d: %s", code, got.Error)
		}
		if len(got.Results) != 2 || got.Results[0].Mode != "per-block" || got.Results[1].Mode != "batched" {
			t.Fatalf("results %+v", got.Results)
		}
		if pb := got.Results[0]; pb.Stats.Calls != 571 || len(pb.Calls) != 571 || pb.Errno != "" {
			t.Errorf("per-block: %d calls (%d listed), errno %q", pb.Stats.Calls, len(pb.Calls), pb.Errno)
		}
		want := [][2]uint32{{34304, 513}, {6144, 57}, {9000, 1}}
		if b := got.Results[1]; len(b.Calls) != 3 || b.Calls[0] != want[0] || b.Calls[1] != want[1] || b.Calls[2] != want[2] {
			t.Errorf("batched calls %v, want %v", b.Calls, want)
		}
		if !got.Permalink || got.Player != sandbox.PlayerURL(got.Slots, "both") || got.Page != sandbox.PageURL(got.Slots) {
			t.Errorf("permalink %v player %q page %q", got.Permalink, got.Player, got.Page)
		}
		if len(got.Layout) != 2 || got.Layout[1].Index != 873 {
			t.Errorf("layout %+v", got.Layout)
		}
	})

	t.Run("one mode, a repeated address", func(t *testing.T) {
		var got sandboxAnswer
		if code := ts.postSandbox(t, body("7201 7200 7201", "batched"), &got); code != 200 {
			t.Fatalf("status %d: %s", code, got.Error)
		}
		if len(got.Results) != 1 || got.Results[0].Errno != "EFSCORRUPTED" || len(got.Results[0].Calls) != 2 {
			t.Errorf("%+v", got.Results)
		}
	})

	t.Run("syntax errors name the token and its position", func(t *testing.T) {
		for _, tc := range []struct {
			slots string
			pos   int
			index int
			token string
		}{
			{"7200 NEW*x", 5, 2, "NEW*x"},
			{"7200 | | 7300", 7, 3, "|"},
			{"7200-7100", 0, 1, "7200-7100"},
			{"", 0, 0, ""},
			{"7200 0", 5, 2, "0"},
		} {
			var got sandboxAnswer
			if code := ts.postSandbox(t, body(tc.slots, ""), &got); code != 400 {
				t.Errorf("%q: status %d, want 400", tc.slots, code)
			}
			if got.Pos != tc.pos || got.Index != tc.index || got.Token != tc.token || !strings.HasPrefix(got.Error, "sandbox: ") {
				t.Errorf("%q: %+v, want pos %d index %d token %q", tc.slots, got, tc.pos, tc.index, tc.token)
			}
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		var got sandboxAnswer
		for _, b := range []string{`{"slots":"7200","mode":"fast"}`, `not json`, `{"slots":7200}`} {
			if code := ts.postSandbox(t, b, &got); code != 400 || got.Error == "" {
				t.Errorf("%s: status %d, error %q", b, code, got.Error)
			}
		}
		big := `{"slots":"` + strings.Repeat("7", 2*sandbox.MaxInput+2000) + `"}`
		if code := ts.postSandbox(t, big, &got); code != http.StatusRequestEntityTooLarge {
			t.Errorf("oversized body: status %d, want 413", code)
		}
		res, err := http.Get(ts.ts.URL + "/api/sandbox")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET /api/sandbox: %d, want 405", res.StatusCode)
		}
	})

	t.Run("a long list: bounded answer, no permalink", func(t *testing.T) {
		if testing.Short() {
			t.Skip("slow: 1 M slots per-block")
		}
		var got sandboxAnswer
		if code := ts.postSandbox(t, body("4096-1004095", "per-block"), &got); code != 200 {
			t.Fatalf("status %d: %s", code, got.Error)
		}
		r := got.Results[0]
		if r.Stats.Calls != 1_000_000 || len(r.Calls) != apiMaxCalls || r.CallsOmitted != 1_000_000-apiMaxCalls {
			t.Errorf("%d calls, %d listed, %d omitted", r.Stats.Calls, len(r.Calls), r.CallsOmitted)
		}
		if len(r.Segments) != apiMaxSegments || r.SegmentsOmitted != 1954-apiMaxSegments {
			t.Errorf("%d segments listed, %d omitted", len(r.Segments), r.SegmentsOmitted)
		}
		// 2,000 discontiguous addresses do not fit a permalink.
		var sb strings.Builder
		for i := range 2000 {
			sb.WriteString(strconv.Itoa(10000+2*i) + " ")
		}
		got = sandboxAnswer{}
		if code := ts.postSandbox(t, body(sb.String(), ""), &got); code != 200 || got.Permalink || got.Player != "" {
			t.Errorf("status %d, permalink %v %q for a %d-byte list", code, got.Permalink, got.Player, len(got.Slots))
		}
	})
}

func TestExerciseAPI(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	img, err := ts.image(DemoID)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"seed=7", "seed=3&kind=file", "seed=3&kind=file&image=demo"} {
		var got map[string]any
		if code := ts.get(t, "/api/exercise?"+q, &got); code != 200 {
			t.Fatalf("%s: %d %v", q, code, got)
		}
		v, _ := url.ParseQuery(q)
		seed, _ := strconv.ParseUint(v.Get("seed"), 10, 64)
		kind, _ := exercise.ParseKind(v.Get("kind"))
		e, err := exercise.New(seed, kind, img.Image, img.Name)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(e)
		gotJSON, _ := json.Marshal(got)
		var w map[string]any
		json.Unmarshal(want, &w)
		wantJSON, _ := json.Marshal(w)
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("%s: %s, want %s", q, gotJSON, wantJSON)
		}
	}
	for q, code := range map[string]int{"seed=-1": 400, "seed=1&kind=disk": 400, "seed=1&kind=file&image=nope": 404} {
		var got map[string]any
		if c := ts.get(t, "/api/exercise?"+q, &got); c != code {
			t.Errorf("%s: %d, want %d", q, c, code)
		}
	}
}

func TestSandboxAndExercisePages(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	t.Run("sandbox", func(t *testing.T) {
		doc, code := ts.getPage(t, "/sandbox?slots="+url.QueryEscape("7200 | 7201"))
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		for _, id := range []string{"sandbox", "sandbox-input", "sandbox-run", "sandbox-grammar", "sandbox-generators",
			"sandbox-results", "sandbox-player-link", "sandbox-permalink", "sandbox-permalink-message", "sandbox-error",
			"sandbox-calls-per-block", "sandbox-calls-batched"} {
			if doc.Find(testid(id)).Length() != 1 {
				t.Errorf("no single %s", id)
			}
		}
		box := doc.Find(testid("sandbox-input"))
		if box.Text() != "7200 | 7201" {
			t.Errorf("text box holds %q", box.Text())
		}
		if ph, _ := box.Attr("placeholder"); !strings.Contains(ph, "34304-34815 NEW*3 34816 | 6144-6200 NULL 9000") {
			t.Errorf("placeholder %q does not show the language", ph)
		}
		gens := doc.Find(testid("sandbox-gen"))
		if gens.Length() != len(sandbox.Examples()) {
			t.Errorf("%d generator buttons, want %d", gens.Length(), len(sandbox.Examples()))
		}
		for i, ex := range sandbox.Examples() {
			if v, _ := gens.Eq(i).Attr("data-slots"); v != ex.Slots {
				t.Errorf("button %s fills %q, want %q", ex.Name, v, ex.Slots)
			}
		}
		if v, _ := doc.Find(testid("sandbox")).Attr("data-max-permalink"); v != strconv.Itoa(sandbox.MaxPermalink) {
			t.Errorf("data-max-permalink %q", v)
		}
		if doc.Find(`script:not([src]):not([type="application/json"])`).Length() != 0 || doc.Find("[style]").Length() != 0 {
			t.Error("inline script or style")
		}
	})
	t.Run("exercise", func(t *testing.T) {
		for _, q := range []string{"seed=7", "seed=3&kind=file", "seed=12&kind=file&image=demo"} {
			doc, code := ts.getPage(t, "/exercise?"+q)
			if code != 200 {
				t.Fatalf("%s: status %d", q, code)
			}
			n := doc.Find(testid("exercise-question")).Length()
			if n < 3 || n > 5 || doc.Find(testid("exercise-answer")).Length() != n || doc.Find(testid("exercise-reveal")).Length() != n {
				t.Errorf("%s: %d questions with %d answers", q, n, doc.Find(testid("exercise-answer")).Length())
			}
			if _, open := doc.Find(testid("exercise-reveal")).First().Attr("open"); open {
				t.Errorf("%s: an answer is shown before it is revealed", q)
			}
			href, _ := doc.Find(testid("exercise-player-link")).Attr("href")
			if strings.Contains(q, "file") {
				if !strings.HasPrefix(href, "/images/demo/run?") || doc.Find(testid("exercise-path")).Length() != 1 {
					t.Errorf("%s: player link %q", q, href)
				}
			} else {
				slots := doc.Find(testid("exercise-slots")).Text()
				if href != sandbox.PlayerURL(slots, "both") || slots == "" {
					t.Errorf("%s: player link %q for %q", q, href, slots)
				}
				if h, _ := doc.Find(testid("exercise-sandbox-link")).Attr("href"); h != sandbox.PageURL(slots) {
					t.Errorf("%s: sandbox link %q", q, h)
				}
			}
			if doc.Find(testid("exercise-reveal-all")).Length() != 1 || doc.Find(testid("exercise-next")).Length() != 1 {
				t.Errorf("%s: no reveal-all or next link", q)
			}
		}
		// Answers checked by the server: right (written with a separator and spaces), wrong,
		// empty, unreadable; the score counts what was read.
		img, err := ts.image(DemoID)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"slots", "file"} {
			k, _ := exercise.ParseKind(kind)
			e, err := exercise.New(12, k, img.Image, img.Name)
			if err != nil {
				t.Fatal(err)
			}
			q := url.Values{"seed": {"12"}, "kind": {kind}}
			q.Add("answer", " "+e.Questions[0].Answer+" ")
			q.Add("answer", wrongExerciseAnswer(e.Questions[1]))
			q.Add("answer", "")
			if len(e.Questions) > 3 {
				q.Add("answer", "zz top")
			}
			doc, code := ts.getPage(t, "/exercise?"+q.Encode())
			if code != 200 {
				t.Fatalf("%s: status %d", q.Encode(), code)
			}
			v := doc.Find(testid("exercise-verdict"))
			attr := func(i int) string { a, _ := v.Eq(i).Attr("data-right"); return a }
			if attr(0) != "true" || attr(1) != "false" || attr(2) != "" || !strings.HasPrefix(v.Eq(0).Text(), "✓") || !strings.HasPrefix(v.Eq(1).Text(), "✗") || v.Eq(2).Text() != "" {
				t.Errorf("%s: verdicts %q %q %q (%q %q %q)", kind, attr(0), attr(1), attr(2), v.Eq(0).Text(), v.Eq(1).Text(), v.Eq(2).Text())
			}
			if len(e.Questions) > 3 && (attr(3) != "" || v.Eq(3).Text() == "") {
				t.Errorf("%s: an unreadable answer got %q %q, want no verdict and a hint", kind, attr(3), v.Eq(3).Text())
			}
			// An answer that cannot be read counts as given, not right, and is named (issue 38).
			want := "1 of 2 right"
			if len(e.Questions) > 3 {
				want = "1 of 3 right, one unreadable (question 4)"
			}
			if got := doc.Find(testid("exercise-score")).Text(); got != want {
				t.Errorf("%s: score %q, want %q", kind, got, want)
			}
			if got, _ := doc.Find(testid("exercise-input")).Eq(1).Attr("value"); got != wrongExerciseAnswer(e.Questions[1]) {
				t.Errorf("%s: the second box holds %q, want the answer given", kind, got)
			}
			if _, open := doc.Find(testid("exercise-reveal")).Eq(1).Attr("open"); open || strings.Contains(v.Eq(1).Text(), e.Questions[1].Answer+" ") {
				t.Errorf("%s: a wrong answer reveals the right one", kind)
			}
		}
		if doc, _ := ts.getPage(t, "/exercise?seed=1&answer="); doc.Find(testid("exercise-score")).Text() != "no answer to check yet" {
			t.Errorf("an empty sheet: score %q", doc.Find(testid("exercise-score")).Text())
		}
		if _, code := ts.getPage(t, "/exercise?seed=x"); code != 400 {
			t.Errorf("bad seed: %d, want 400", code)
		}
		if _, code := ts.getPage(t, "/exercise?kind=file&image=nope"); code != 404 {
			t.Errorf("unknown image: %d, want 404", code)
		}
	})
}

// wrongExerciseAnswer is an answer q takes that is not the engine's.
func wrongExerciseAnswer(q exercise.Question) string {
	for _, c := range q.Choices {
		if c != q.Answer {
			return c
		}
	}
	switch q.Answer {
	case "yes":
		return "no"
	case "no":
		return "yes"
	}
	n, _ := strconv.ParseUint(q.Answer, 10, 64)
	return strconv.FormatUint(n+1, 10)
}
