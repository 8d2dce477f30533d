package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/survey"
)

func getSurvey(t *testing.T, ts *testServer, path string) (*http.Response, string) {
	t.Helper()
	res, err := ts.ts.Client().Get(ts.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestSurveyAPI: the progress endpoint starts the demo's survey and reports it done; the survey's
// JSON is survey.Run's (every row, the totals), its CSV a line a file; a second survey of the
// image is the first, answered from the cache, and holds its rows' memory while kept.
func TestSurveyAPI(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	deadline := time.Now().Add(30 * time.Second)
	var p surveyProgress
	for {
		_, body := getSurvey(t, ts, "/api/images/demo/survey/progress")
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		if p.State == "done" || p.State == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p.State != "done" || p.Total != 40 || p.Done != 40 {
		t.Fatalf("progress %+v", p)
	}
	res, body := getSurvey(t, ts, "/api/images/demo/survey")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET survey: %s %s", res.Status, body)
	}
	var got struct {
		Files  []map[string]any `json:"files"`
		Totals survey.Totals    `json:"totals"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	si, err := ts.image(DemoID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := survey.Run(context.Background(), si.Image, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != len(want.Files) || got.Totals != want.Totals {
		t.Errorf("the API's survey: %d files, totals %+v; survey.Run's %d, %+v", len(got.Files), got.Totals, len(want.Files), want.Totals)
	}
	res, body = getSurvey(t, ts, "/api/images/demo/survey?format=csv&download=1")
	if lines := strings.Count(body, "\n"); res.StatusCode != http.StatusOK || lines != 41 ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || !strings.Contains(res.Header.Get("Content-Disposition"), "survey-demo.csv") {
		t.Errorf("CSV: %s, %d lines, %q, %q", res.Status, lines, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}
	if res, _ := getSurvey(t, ts, "/api/images/demo/survey?format=xml"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("format=xml: %s", res.Status)
	}
	if res, _ := getSurvey(t, ts, "/api/images/nope/survey/progress"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown image: %s", res.Status)
	}
	ts.surveys.mu.Lock()
	first := ts.surveys.jobs[DemoID]
	ts.surveys.mu.Unlock()
	getSurvey(t, ts, "/api/images/demo/survey/progress")
	ts.surveys.mu.Lock()
	again := ts.surveys.jobs[DemoID]
	ts.surveys.mu.Unlock()
	if first == nil || first != again {
		t.Error("the second survey of the image was not the first one's, from the cache")
	}
	if used := ts.MemoryInUse(); used != 40*survey.PerFileBytes {
		t.Errorf("a kept survey of 40 files holds %d bytes of the budget, want %d", used, 40*survey.PerFileBytes)
	}
	// The page links the player, the downloads and the image page links the survey.
	_, page := getSurvey(t, ts, "/images/demo/survey")
	for _, want := range []string{`data-testid="survey-csv"`, `/api/images/demo/survey?format=json&amp;download=1`, `js/survey`} {
		if !strings.Contains(page, want) {
			t.Errorf("the survey page lacks %s", want)
		}
	}
	if _, img := getSurvey(t, ts, "/images/demo"); !strings.Contains(img, `href="/images/demo/survey"`) {
		t.Error("the image page does not link the survey")
	}
}

// TestSurveyStopsWhenNobodyAsks: a survey nobody asks about for surveyIdle stops (here while it
// waits for a heavy-work slot), gives back everything it reserved and is not kept: the next request
// starts it again.
func TestSurveyStopsWhenNobodyAsks(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	ts.surveyIdleFor = 200 * time.Millisecond
	for range cap(ts.heavy.slots) {
		ts.heavy.slots <- struct{}{}
	}
	_, body := getSurvey(t, ts, "/api/images/demo/survey/progress")
	if !strings.Contains(body, `"state":"listing"`) {
		t.Fatalf("progress %s", body)
	}
	ts.surveys.mu.Lock()
	j := ts.surveys.jobs[DemoID]
	ts.surveys.mu.Unlock()
	select {
	case <-j.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the survey nobody asked about still runs")
	}
	if j.err == nil {
		t.Fatal("it finished")
	}
	if used := ts.MemoryInUse(); used != 0 {
		t.Errorf("the stopped survey still holds %d bytes of the budget", used)
	}
	for range cap(ts.heavy.slots) {
		<-ts.heavy.slots
	}
	// Whoever asks next starts it again, and it runs to the end.
	getSurvey(t, ts, "/api/images/demo/survey/progress")
	ts.surveys.mu.Lock()
	again := ts.surveys.jobs[DemoID]
	ts.surveys.mu.Unlock()
	if again == j {
		t.Fatal("the stopped survey is the answer to the next request")
	}
	if res, body := getSurvey(t, ts, "/api/images/demo/survey"); res.StatusCode != http.StatusOK {
		t.Errorf("after a restart: %s %s", res.Status, body)
	}
}

// TestSurveyRefusedIsReported: a survey the memory budget cannot hold fails with 503 and says why
// on the progress route (state failed, the budget's message), rather than starting again at every
// poll.
func TestSurveyRefusedIsReported(t *testing.T) {
	ts := mustOpenServer(t, Config{MaxMemory: surveyBase + 10*survey.PerFileBytes}) // room for 10 rows of 40
	var p surveyProgress
	deadline := time.Now().Add(30 * time.Second)
	for p.State != "failed" && time.Now().Before(deadline) {
		_, body := getSurvey(t, ts, "/api/images/demo/survey/progress")
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p.State != "failed" || !strings.Contains(p.Error, "busy") {
		t.Fatalf("progress under a budget too small: %+v", p)
	}
	if res, _ := getSurvey(t, ts, "/api/images/demo/survey"); res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("GET survey under a budget too small: %s, Retry-After %q", res.Status, res.Header.Get("Retry-After"))
	}
	if used := ts.MemoryInUse(); used != 0 {
		t.Errorf("the refused survey holds %d bytes", used)
	}
}

// TestSurveyReservation: what a survey reserves (surveyBase, survey.PerFileBytes a file) holds the
// heap it grows by, on 3,000 files made with mkfs.f2fs and sload.f2fs (most of one to ten blocks,
// some inline, a few of 1–4 MiB): the survey and its JSON answer, written to a client that reads it all.
func TestSurveyReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image with mkfs.f2fs and sload.f2fs")
	}
	files := map[string][]byte{}
	for i := range 3000 {
		n := 1 + (i*7919)%(40<<10)
		if i%500 == 0 {
			n = 1<<20 + i*1024
		}
		b := make([]byte, n)
		for k := range b {
			b[k] = byte(k*31+i) | 1
		}
		files[fmt.Sprintf("d%02d/f%04d", i%30, i)] = b
	}
	raw := makeF2FS(t, 2<<30, files)
	s := mustOpenServer(t, Config{})
	img, err := imgio.OpenFileContext(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage("many", "many.img", img); err != nil {
		t.Fatal(err)
	}
	var d *discardWriter
	heap, reserved := reservedAndHeap(s.Server, func() {
		d = serveDiscard(s.Server, http.MethodGet, "/api/images/many/survey", nil)
	})
	if d.code != http.StatusOK || d.n < 3000*500 {
		t.Fatalf("GET survey: %d, %d bytes", d.code, d.n)
	}
	checkReservation(t, "a survey of 3,000 files", heap, reserved)
}
