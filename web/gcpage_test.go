package web

import (
	"net/http"
	"slices"
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

// TestGCPageQuizShowsTheTerms: the question shows every term its policy weighs (issue 30): for a
// cost-benefit call (gc 0) the candidates' valid blocks, u, mean mtime and age — the same as the
// result shows after the guess — in a table and on the map's hover, with no cost or rank; for
// greedy (gc 1) the valid blocks and u, no age.
func TestGCPageQuizShowsTheTerms(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, c := range []struct {
		op          string
		costBenefit bool
	}{{"gc+0", true}, {"gc+1", false}} {
		res := getDoc(t, ts, "/images/demo/next?op="+c.op)
		// The result's candidates: section → its terms (valid, mtime, u, age).
		want := map[string][]string{}
		res.Find(`[data-testid="gc-candidate"]`).Each(func(_ int, tr *goquery.Selection) {
			var td []string
			tr.Find("td").Each(func(_ int, s *goquery.Selection) {
				td = append(td, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s.Text()), "◂ victim")))
			})
			want[td[0]] = td[1:5] // valid, mean mtime, u %, age
		})
		if len(want) < 2 {
			t.Fatalf("%s: %d candidates, want a question with a choice", c.op, len(want))
		}
		doc := getDoc(t, ts, "/images/demo/next?op="+c.op+"&quiz=1")
		head := doc.Find(`[data-testid="gc-terms"] th`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		wantHead := []string{"section (first segment)", "valid", "u %"}
		if c.costBenefit {
			wantHead = append(wantHead, "mean mtime", "age")
		}
		if !slices.Equal(head, wantHead) {
			t.Errorf("%s: the question's terms are %q, want %q (no cost, no rank)", c.op, head, wantHead)
		}
		rows := doc.Find(`[data-testid="gc-term"]`)
		if rows.Length() != len(want) || doc.Find(`[data-testid^="gc-option-"]`).Length() != len(want) {
			t.Errorf("%s: %d rows of terms, %d options, %d candidates", c.op, rows.Length(), doc.Find(`[data-testid^="gc-option-"]`).Length(), len(want))
		}
		rows.Each(func(_ int, tr *goquery.Selection) {
			td := tr.Find("td").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
			w := want[td[0]]
			got := []string{td[1], "", td[2]}
			exp := []string{w[0], "", w[2]}
			if c.costBenefit {
				got[1], exp[1] = td[3], w[1]
				got, exp = append(got, td[4]), append(exp, w[3])
			}
			if !slices.Equal(got, exp) {
				t.Errorf("%s: section %s's terms %q, the result's %q", c.op, td[0], got, exp)
			}
			title := doc.Find(`[data-testid="gc-cell"][data-segno="`+td[0]+`"]`).AttrOr("title", "")
			if has := strings.Contains(title, "mean mtime "+w[1]) && strings.Contains(title, "age "+w[3]); has != c.costBenefit {
				t.Errorf("%s: section %s's hover %q (cost-benefit %v)", c.op, td[0], title, c.costBenefit)
			}
		})
	}
}

// TestGCPageQuizLinks: while the gc page asks, no link on it but the answers (and the quiz's own
// switch, which says the answer shows) leads to a page that names the victim (issue 38): the next
// calls start from the state after this one.
func TestGCPageQuizLinks(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, op := range []string{"gc+1", "gc+0"} {
		open := getDoc(t, ts, "/images/demo/next?op="+op)
		victim := open.Find(`.gc-victim`).AttrOr("data-segno", "")
		if victim == "" {
			t.Fatalf("%s: no victim", op)
		}
		doc := getDoc(t, ts, "/images/demo/next?op="+op+"&quiz=1")
		if doc.Find(`[data-testid="gc-question"]`).Length() != 1 {
			t.Fatalf("%s: no question", op)
		}
		n := 0
		doc.Find(`a[href]`).Each(func(_ int, a *goquery.Selection) {
			id := a.AttrOr("data-testid", "")
			href := a.AttrOr("href", "")
			if strings.HasPrefix(id, "gc-option-") || id == "gc-quiz-toggle" || !strings.HasPrefix(href, "/images/demo/next") {
				return
			}
			n++
			d := getDoc(t, ts, href)
			if d.Find(`.gc-victim[data-segno="`+victim+`"]`).Length() != 0 || strings.Contains(d.Find(`[data-testid="gc-summary"]`).Text(), "segment "+victim) {
				t.Errorf("%s: the link %q (%s) shows the victim %s before the guess", op, href, id, victim)
			}
		})
		if n == 0 {
			t.Errorf("%s: no link checked", op)
		}
		if doc.Find(`[data-testid="gc-next-after"]`).Length() != 1 {
			t.Errorf("%s: the page does not say the next calls come after the answer", op)
		}
	}
}
