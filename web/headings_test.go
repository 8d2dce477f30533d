package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestEveryPageOneH1 is the fast tier's half of the classroom sweep's heading check (issue 30:
// axe-core's page-has-heading-one failed on the image page and the player): classroomPages has a
// page of every page route, and each, as the server writes it, has exactly one h1 that says
// something. The follow
// page needs a live room, which only the browser sweep opens; its template is the player's.
func TestEveryPageOneH1(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	addZeroedDemo(t, ts)
	sweepCoversRoutes(t, ts.Handler()) // here too, as the browser sweep is left out of -short
	for _, p := range classroomPages {
		if strings.Contains(p.path, "{code}") {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, ts.ts.URL+p.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", "text/html") // a browser's: the not-found page is HTML for it
			res, err := ts.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK && p.name != "notfound" {
				t.Fatalf("GET %s: %s", p.path, res.Status)
			}
			doc, err := goquery.NewDocumentFromReader(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			h1 := doc.Find("h1")
			if h1.Length() != 1 {
				t.Fatalf("GET %s has %d h1 headings, want 1", p.path, h1.Length())
			}
			if strings.TrimSpace(h1.Text()) == "" {
				t.Errorf("GET %s: the h1 is empty", p.path)
			}
		})
	}
}
