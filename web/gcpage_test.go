package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func getDoc(t *testing.T, ts *testServer, path string) *goquery.Document {
	t.Helper()
	res, err := http.Get(ts.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestGCPage: the "what happens next" page on the demo image: a foreground call's victim is
// outlined and prefree, its candidates ranked; the add links and the trail are URLs of the same
// page, so every step is a fresh load; the image page links to it.
func TestGCPage(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	if href, _ := getDoc(t, ts, "/images/demo").Find(`[data-testid="image-next"]`).Attr("href"); href != "/images/demo/next" {
		t.Errorf("image page links to %q", href)
	}
	doc := getDoc(t, ts, "/images/demo/next?op=gc+1")
	cells := doc.Find(`[data-testid="gc-cell"]`)
	victims := doc.Find(`.gc-victim`)
	if cells.Length() == 0 || victims.Length() != 1 || victims.AttrOr("data-class", "") != "prefree" {
		t.Fatalf("%d cells, %d victims (class %q)", cells.Length(), victims.Length(), victims.AttrOr("data-class", ""))
	}
	chosen := doc.Find(`[data-testid="gc-candidate"][data-chosen="true"]`)
	if doc.Find(`[data-testid="gc-candidate"]`).Length() == 0 || chosen.Length() != 1 || !strings.Contains(chosen.Text(), victims.AttrOr("data-segno", "?")) {
		t.Errorf("candidates: chosen %q, victim %s", chosen.Text(), victims.AttrOr("data-segno", "?"))
	}
	add, _ := doc.Find(`[data-testid="gc-add-checkpoint"]`).Attr("href")
	if add != "/images/demo/next?op=gc+1&op=checkpoint" {
		t.Fatalf("checkpoint link %q", add)
	}
	next := getDoc(t, ts, add)
	if next.Find(`.gc-victim`).Length() != 0 || next.Find(`[data-class="prefree"]`).Length() != 0 {
		t.Errorf("after the checkpoint: a victim or prefree cell left")
	}
	if got := next.Find(`[data-segno="`+victims.AttrOr("data-segno", "")+`"]`).AttrOr("data-class", ""); got != "free" {
		t.Errorf("victim after the checkpoint is %q, want free", got)
	}
	back, _ := next.Find(`[data-testid="gc-step-1"]`).Attr("href")
	if back != "/images/demo/next?op=gc+1" {
		t.Errorf("step back %q", back)
	}
	for _, bad := range []string{"/images/demo/next?op=gc+2", "/images/demo/next?now=-1"} {
		if res, err := http.Get(ts.ts.URL + bad); err != nil || res.StatusCode != 400 {
			t.Errorf("GET %s: %v %v", bad, res.StatusCode, err)
		}
	}
}

// TestGCPageQuiz: with quiz=1 the page asks which section the cleaner picks, shows the map as it
// was before the call and hides the result; a guess reveals it.
func TestGCPageQuiz(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	open := getDoc(t, ts, "/images/demo/next?op=gc+1")
	victim := open.Find(`.gc-victim`).AttrOr("data-segno", "")
	doc := getDoc(t, ts, "/images/demo/next?op=gc+1&quiz=1")
	if doc.Find(`[data-testid="gc-question"]`).Length() != 1 || doc.Find(`[data-testid="gc-result"]`).Length() != 0 || doc.Find(`.gc-victim`).Length() != 0 {
		t.Fatal("quiz: no question, or the answer shows")
	}
	if got := doc.Find(`[data-segno="`+victim+`"]`).AttrOr("data-class", ""); got != "dirty" {
		t.Errorf("quiz map shows the victim as %q, want dirty (before the call)", got)
	}
	right, ok := doc.Find(`[data-testid="gc-option-` + victim + `"]`).Attr("href")
	if !ok {
		t.Fatalf("no option for the victim %s", victim)
	}
	ans := getDoc(t, ts, right)
	if v := ans.Find(`[data-testid="gc-verdict"]`).Text(); !strings.Contains(v, "Right") || ans.Find(`.gc-victim`).Length() != 1 {
		t.Errorf("verdict %q", v)
	}
	wrong := doc.Find(`[data-testid^="gc-option-"]`).Not(`[data-testid="gc-option-`+victim+`"]`).First().AttrOr("href", "")
	if v := getDoc(t, ts, wrong).Find(`[data-testid="gc-verdict"]`).Text(); !strings.Contains(v, "the kernel picks segment "+victim) {
		t.Errorf("wrong guess verdict %q", v)
	}
}
