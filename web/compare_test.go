package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/request"
)

// TestComparePage holds GET /compare to its contract: a bad parameter is refused with the status the
// run page would give it, before any socket opens; a good one renders two sides, zero then punch, each
// with a /ws/run query that parses (request.Parse, as the socket's handler reads it) to the page's
// range, its own op and the batched mode whatever the page's query said of op and mode.
func TestComparePage(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	page := func(q url.Values) string { return "/compare?" + q.Encode() }
	holes := url.Values{"image": {"demo"}, "path": {"/cases/holes.bin"}, "offset": {"0"}, "length": {"786432"}}
	with := func(base url.Values, kv ...string) url.Values {
		q := url.Values{}
		for k, v := range base {
			q[k] = append([]string(nil), v...)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		return q
	}
	for _, tc := range []struct {
		name   string
		q      url.Values
		status int
	}{
		{"no image", url.Values{"path": {"/cases/holes.bin"}}, http.StatusBadRequest},
		{"no path", url.Values{"image": {"demo"}}, http.StatusBadRequest},
		{"relative path", url.Values{"image": {"demo"}, "path": {"cases/holes.bin"}}, http.StatusBadRequest},
		{"bad offset", with(holes, "offset", "zz"), http.StatusBadRequest},
		{"bad length", url.Values{"image": {"demo"}, "path": {"/cases/holes.bin"}, "length": {"1.5.5"}}, http.StatusBadRequest},
		{"bad keepSize", with(holes, "keepSize", "maybe"), http.StatusBadRequest},
		{"bad before", with(holes, "before", "frobnicate /cases/holes.bin"), http.StatusBadRequest},
		{"before on another file", with(holes, "before", "zero /cases/contiguous.bin 0 4096"), http.StatusBadRequest},
		{"unknown image", url.Values{"image": {"nope"}, "path": {"/x"}}, http.StatusNotFound},
		{"unknown path", url.Values{"image": {"demo"}, "path": {"/nope.bin"}}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, status := ts.getPage(t, page(tc.q))
			if status != tc.status {
				t.Fatalf("GET %s: status %d, want %d", page(tc.q), status, tc.status)
			}
			if doc.Find(testid("error-page")).Length() != 1 {
				t.Errorf("GET %s: no error page", page(tc.q))
			}
			if doc.Find(testid("compare")).Length() != 0 {
				t.Errorf("GET %s: the compare page rendered for a refused request", page(tc.q))
			}
		})
	}

	for _, tc := range []struct {
		name   string
		q      url.Values
		before []string
	}{
		{"holes", holes, nil},
		// op and mode in the page's query are not the page's to choose: each side has its own.
		{"op and mode overridden", with(holes, "op", "truncate", "size", "4096", "mode", "per-block"), nil},
		{"preallocated by a zero first", with(url.Values{"image": {"demo"}, "path": {"/cases/contiguous.bin"}, "offset": {"0"}, "length": {"1MiB"}},
			"before", "zero /cases/contiguous.bin 0 1MiB"), []string{"zero /cases/contiguous.bin 0 1048576"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, status := ts.getPage(t, page(tc.q))
			if status != http.StatusOK {
				t.Fatalf("GET %s: status %d", page(tc.q), status)
			}
			for _, id := range []string{"compare", "compare-controls", "cmp-play", "cmp-step", "cmp-back", "cmp-reset", "cmp-end", "cmp-seek", "cmp-status", "compare-summary"} {
				if doc.Find(testid(id)).Length() != 1 {
					t.Errorf("no %s", id)
				}
			}
			// What each side must play: the page's range, read as the run page reads it.
			rq := url.Values{}
			for k, v := range tc.q {
				if k != "op" && k != "size" && k != "mode" {
					rq[k] = v
				}
			}
			want, err := request.Parse(rq.Get)
			if err != nil {
				t.Fatal(err)
			}
			sides := doc.Find(`.cmp-side`)
			if sides.Length() != 2 {
				t.Fatalf("%d sides, want 2", sides.Length())
			}
			ops := []core.Op{core.OpZero, core.OpPunch}
			sides.Each(func(k int, s *goquery.Selection) {
				op := s.AttrOr("data-op", "")
				if op != ops[k].String() {
					t.Errorf("side %d is %q, want %s", k, op, ops[k])
				}
				for _, id := range []string{"calls-", "locks-", "blocks-", "slots-", "log-", "open-"} {
					if s.Find(testid(id+op)).Length() != 1 {
						t.Errorf("side %s: no %s%s", op, id, op)
					}
				}
				sq, err := url.ParseQuery(s.AttrOr("data-query", ""))
				if err != nil {
					t.Fatalf("side %s: data-query: %v", op, err)
				}
				got, err := request.Parse(sq.Get)
				if err != nil {
					t.Fatalf("side %s: its socket's query %q does not parse: %v", op, sq.Encode(), err)
				}
				if got.Op != ops[k] || got.ModeName() != core.Batched.String() || got.Path != want.Path ||
					got.Offset != want.Offset || got.Length != want.Length || got.HasLength != want.HasLength {
					t.Errorf("side %s: its socket plays %+v, want %s of %+v batched", op, got, ops[k], want)
				}
				if sq.Get("image") != "demo" {
					t.Errorf("side %s: image %q", op, sq.Get("image"))
				}
				if b := sq[FieldBefore]; len(b) != len(tc.q[FieldBefore]) {
					t.Errorf("side %s: before %q, want %q", op, b, tc.q[FieldBefore])
				}
				// The side's link opens the same run in the full player.
				href := s.Find(testid("open-"+op)).AttrOr("href", "")
				u, err := url.Parse(href)
				if err != nil || u.Path != "/images/demo/run" || u.Query().Get("op") != op || u.Query().Get("mode") != core.Batched.String() {
					t.Errorf("side %s: player link %q", op, href)
				}
			})
			if got := doc.Find(testid("compare-before") + " code"); got.Length() != len(tc.before) || (len(tc.before) > 0 && got.First().Text() != tc.before[0]) {
				t.Errorf("before shown as %q, want %q", got.Text(), tc.before)
			}
		})
	}
}

// TestCompareLinks: the run page of a zero links to the compare page of its range (and its earlier
// operations), a punch's does not; a regular file's page links to the compare page of the whole file.
func TestCompareLinks(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	q := url.Values{"path": {"/cases/holes.bin"}, "offset": {"4096"}, "length": {"65536"}, "before": {"zero /cases/holes.bin 0 4096"}}
	doc, status := ts.getPage(t, "/images/demo/run?"+q.Encode())
	if status != http.StatusOK {
		t.Fatalf("run page: status %d", status)
	}
	href, ok := doc.Find(testid("compare-link")).Attr("href")
	if !ok {
		t.Fatal("no compare link on a zero's run page")
	}
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	cq := u.Query()
	if u.Path != "/compare" || cq.Get("image") != "demo" || cq.Get("path") != "/cases/holes.bin" || cq.Get("offset") != "4096" ||
		cq.Get("length") != "65536" || len(cq["before"]) != 1 || cq.Get("before") != "zero /cases/holes.bin 0 4096" {
		t.Errorf("compare link %q", href)
	}
	// The link works: the page it names renders.
	if _, status := ts.getPage(t, href); status != http.StatusOK {
		t.Errorf("GET %s: status %d", href, status)
	}
	q.Set("op", "punch")
	doc, status = ts.getPage(t, "/images/demo/run?"+q.Encode())
	if status != http.StatusOK {
		t.Fatalf("punch run page: status %d", status)
	}
	if doc.Find(testid("compare-link")).Length() != 0 {
		t.Error("a punch's run page links to the compare page")
	}

	// The file page of a regular file links to the compare page of the whole file; a directory's does not.
	doc, status = ts.getPage(t, "/images/demo/file?path="+url.QueryEscape("/cases/holes.bin"))
	if status != http.StatusOK {
		t.Fatalf("file page: status %d", status)
	}
	href = doc.Find(testid("file-compare")).AttrOr("href", "")
	u, err = url.Parse(href)
	if err != nil || u.Path != "/compare" || u.Query().Get("path") != "/cases/holes.bin" || u.Query().Get("offset") != "0" || u.Query().Get("length") != "786432" {
		t.Errorf("file page compare link %q", href)
	}
	if _, status := ts.getPage(t, href); status != http.StatusOK {
		t.Errorf("GET %s: status %d", href, status)
	}
	doc, status = ts.getPage(t, "/images/demo/file?path=/cases")
	if status != http.StatusOK {
		t.Fatalf("directory's file page: status %d", status)
	}
	if doc.Find(testid("file-compare")).Length() != 0 {
		t.Error("a directory's file page links to the compare page")
	}
}

// TestOutlineKeyNamesTheOp: a zero and a punch of one range are two runs to the outline cache (the
// compare page opens both at once; one key for both handed the punch the zero's outline).
func TestOutlineKeyNamesTheOp(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	keys := map[string]core.Op{}
	for _, op := range []core.Op{core.OpZero, core.OpPunch} {
		tg, err := ts.resolveRun(context.Background(), compareQuery(url.Values{"image": {"demo"}, "path": {"/cases/holes.bin"}}, op))
		if err != nil {
			t.Fatal(err)
		}
		if tg.spec.Request.Op != op {
			t.Fatalf("resolved %s, want %s", tg.spec.Request.Op, op)
		}
		if prev, dup := keys[tg.key()]; dup {
			t.Errorf("%s and %s share the outline key %q", prev, op, tg.key())
		}
		keys[tg.key()] = op
	}
}
