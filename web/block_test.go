package web

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/zrviz/zrviz/imgio"
)

// Demo facts (imgio/demo/README.md, checked by imgio's tests against dump.f2fs):
// /cases/contiguous.bin is inode 28 at block 4625 (0x1211), its 1024 blocks start at 22528;
// /seed/bench64.bin is inode 10, its i_nid[0] direct node (nid 11) is at block 4609.
const (
	contigData  = 22528
	contigInode = 4625
	benchDirect = 4609
)

func TestBlockAPI(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	tests := []struct {
		path   string
		status int
		check  func(t *testing.T, b imgio.BlockInfo)
	}{
		{"/api/images/demo/blocks/22528", 200, func(t *testing.T, b imgio.BlockInfo) {
			if b.Kind != imgio.KindData || b.Owner == nil || b.Owner.Path != "/cases/contiguous.bin" || *b.Owner.Index != 0 || *b.Segno != 36 || !*b.Valid {
				t.Errorf("got %+v", b)
			}
		}},
		{"/api/images/demo/blocks/0x1211", 200, func(t *testing.T, b imgio.BlockInfo) {
			if b.Kind != imgio.KindInode || b.Owner == nil || *b.Owner.Nid != 28 || b.Owner.Path != "/cases/contiguous.bin" {
				t.Errorf("got kind %s owner %+v", b.Kind, b.Owner)
			}
		}},
		{"/api/images/demo/blocks/0", 200, func(t *testing.T, b imgio.BlockInfo) {
			if b.Kind != imgio.KindSuperblock || len(b.Fields) < 30 || b.Segno != nil {
				t.Errorf("got kind %s, %d fields", b.Kind, len(b.Fields))
			}
		}},
		{"/api/images/demo/blocks/99999999", 200, func(t *testing.T, b imgio.BlockInfo) {
			if b.Area != imgio.AreaOutside {
				t.Errorf("area %s, want outside", b.Area)
			}
		}},
		{"/api/images/demo/blocks/abc", 400, nil},
		{"/api/images/demo/blocks/4294967296", 400, nil},
		{"/api/images/demo/blocks/-1", 400, nil},
		{"/api/images/nope/blocks/1", 404, nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			var raw map[string]json.RawMessage
			if got := ts.get(t, tc.path, &raw); got != tc.status {
				t.Fatalf("status %d, want %d: %v", got, tc.status, raw)
			}
			if tc.check == nil {
				if _, ok := raw["error"]; !ok {
					t.Errorf("no error message: %v", raw)
				}
				return
			}
			// Exactly the keys.
			for _, k := range []string{"addr", "area", "kind", "segno", "valid", "owner", "ssa", "fields", "links", "problems"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("key %q missing", k)
				}
			}
			if len(raw) != 10 {
				t.Errorf("%d keys, want 10", len(raw))
			}
			var b imgio.BlockInfo
			body, _ := json.Marshal(raw)
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatal(err)
			}
			tc.check(t, b)
		})
	}
}

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestBlockPage(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	t.Run("data block", func(t *testing.T) {
		doc, code := ts.getPage(t, "/images/demo/blocks/22528")
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		for _, id := range []string{"block-summary", "hexdump", "hex-status", "fields-none", "block-links", "block-no-problems", "block-prev", "block-next", "block-goto"} {
			if doc.Find(testid(id)).Length() == 0 {
				t.Errorf("no %s", id)
			}
		}
		if k := doc.Find(testid("block-kind")).Text(); k != "data" {
			t.Errorf("kind %q", k)
		}
		if h, _ := doc.Find(testid("block-owner-link")).Attr("href"); h != "/images/demo/file?path=%2Fcases%2Fcontiguous.bin#slot=0" {
			t.Errorf("owner link %q", h)
		}
		if hx, _ := doc.Find(testid("hexdump")).Attr("data-hex"); len(hx) != 8192 || !strings.HasPrefix(hx, "3832326363643233") { // "822ccd23" stamp
			t.Errorf("data-hex: %d chars, starts %.16s", len(hx), hx)
		}
		if h, _ := doc.Find(testid("block-link") + `[data-name="owner node"]`).Attr("href"); h != "/images/demo/blocks/4625" {
			t.Errorf("owner node link %q", h)
		}
		if h, _ := doc.Find(testid("block-segment-link")).Attr("href"); h != "/images/demo#seg=36" {
			t.Errorf("segment link %q", h)
		}
		if h, _ := doc.Find(testid("block-prev")).Attr("href"); h != "/images/demo/blocks/22527" {
			t.Errorf("prev %q", h)
		}
	})
	t.Run("inode block", func(t *testing.T) {
		doc, code := ts.getPage(t, "/images/demo/blocks/4625")
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		fields := doc.Find(testid("field"))
		if fields.Length() < 900 { // 873 slots, the inode head, i_nid, the footer
			t.Errorf("%d fields", fields.Length())
		}
		slot := doc.Find(testid("field") + `[data-name="i_addr[0]"]`)
		if off, _ := slot.Attr("data-offset"); off != "360" {
			t.Errorf("i_addr[0] at %q, want 360", off)
		}
		if h, _ := slot.Find(testid("field-link")).Attr("href"); h != "/images/demo/blocks/22528" {
			t.Errorf("i_addr[0] links to %q", h)
		}
		if doc.Find(testid("field-button")).Length() != fields.Length() {
			t.Error("not every field has a button")
		}
		if h, _ := doc.Find(testid("block-owner-link")).Attr("href"); h != "/images/demo/file?path=%2Fcases%2Fcontiguous.bin" {
			t.Errorf("owner link %q", h)
		}
	})
	t.Run("every kind renders", func(t *testing.T) {
		for _, addr := range []string{"0", "1", "7", "512", "513", "1536", "2560", "3584", "3620", "4096", "4609", "4625", "22528", "60000", "65535", "65536", "0xffffffff"} {
			var b imgio.BlockInfo
			if code := ts.get(t, "/api/images/demo/blocks/"+addr, &b); code != 200 {
				t.Fatalf("%s: status %d", addr, code)
			}
			doc, code := ts.getPage(t, "/images/demo/blocks/"+addr)
			if code != 200 || doc.Find(testid("block-kind")).Text() != b.Kind || doc.Find(testid("block-area")).Text() != b.Area {
				t.Errorf("%s: status %d kind %q area %q, API says %s %s", addr, code, doc.Find(testid("block-kind")).Text(), doc.Find(testid("block-area")).Text(), b.Kind, b.Area)
			}
			if pastEnd := b.Addr >= demoSize/4096; pastEnd != (doc.Find(testid("hexdump")).Length() == 0) {
				t.Errorf("%s: hex dump shown %v", addr, doc.Find(testid("hexdump")).Length() > 0)
			}
		}
	})
	t.Run("go to block", func(t *testing.T) {
		for q, want := range map[string]string{"0x5800": "/images/demo/blocks/22528", "4625": "/images/demo/blocks/4625", " 12 ": "/images/demo/blocks/12"} {
			res, err := noRedirect.Get(ts.ts.URL + "/images/demo/blocks?addr=" + strings.ReplaceAll(q, " ", "+"))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
				t.Errorf("addr=%q: %d → %q, want 303 → %s", q, res.StatusCode, res.Header.Get("Location"), want)
			}
		}
		doc, code := ts.getPage(t, "/images/demo/blocks?addr=banana")
		if code != 400 || doc.Find(testid("error-page")).Length() != 1 {
			t.Errorf("bad addr: status %d", code)
		}
		if _, code := ts.getPage(t, "/images/nope/blocks/1"); code != 404 {
			t.Errorf("unknown image: status %d", code)
		}
	})
}

// addCorruptDemo serves a copy of the demo whose direct node at benchDirect has a footer nid that is
// no node id, as image "bad". The demo is expanded into a fresh directory, patched there and opened
// again in place.
func addCorruptDemo(t *testing.T, ts *testServer) {
	t.Helper()
	dir := t.TempDir()
	keep, err := imgio.OpenDemo(&imgio.Options{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keep.Close() })
	files, _ := filepath.Glob(filepath.Join(dir, "*.img"))
	if len(files) != 1 {
		t.Fatalf("expanded demo: %v", files)
	}
	f, err := os.OpenFile(files[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var nid [4]byte
	binary.LittleEndian.PutUint32(nid[:], 0xFFFFFFF0)
	if _, err := f.WriteAt(nid[:], benchDirect*4096+4072); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bad, err := imgio.OpenFileContext(context.Background(), files[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.AddImage("bad", "bad.img", bad); err != nil {
		t.Fatal(err)
	}
}

func TestBlockPageProblems(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	addCorruptDemo(t, ts)
	doc, code := ts.getPage(t, "/images/bad/blocks/4609")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	probs := doc.Find(testid("block-problem"))
	if probs.Length() == 0 {
		t.Fatal("no problem shown")
	}
	var offs []string
	probs.Each(func(_ int, s *goquery.Selection) {
		o, _ := s.Attr("data-offsets")
		offs = append(offs, o)
	})
	if !strings.Contains(strings.Join(offs, " "), "4072") {
		t.Errorf("problem offsets %q, want the footer's nid at 4072", offs)
	}
	if doc.Find(testid("block-owner")).Length() != 0 {
		t.Error("an owner is shown though the node could not be confirmed")
	}
}

// BenchmarkBlockPage renders the block page through the whole handler stack for every kind of block
// at its largest in the demo: a data block, a full inode (873 slots: 900 fields), a full direct node
// (1018 addresses), an indirect node (each nid looked up in the NAT), the SSA block of a full segment,
// both copies of the first NAT and SIT blocks, a compacted summary block and the superblock.
func BenchmarkBlockPage(b *testing.B) {
	ts := mustOpenServer(b, Config{Logger: nil})
	h := ts.Handler()
	si, err := ts.image(DemoID)
	if err != nil {
		b.Fatal(err)
	}
	bench, err := si.Image.Lookup("/seed/bench64.bin")
	if err != nil {
		b.Fatal(err)
	}
	ino, err := si.Image.Block(context.Background(), bench.Inode().Blkaddr)
	if err != nil {
		b.Fatal(err)
	}
	indirect := uint32(0)
	for _, l := range ino.Links {
		if l.Name == "i_nid[2]" {
			indirect = l.Addr
		}
	}
	v := si.Image.Volume()
	cases := []struct {
		name string
		addr uint32
	}{
		{"data", contigData}, {"inode", contigInode}, {"direct", benchDirect}, {"indirect", indirect},
		{"ssa-full-segment", v.SSABlkaddr + 4}, {"nat-copy1", v.NATBlkaddr}, {"nat-copy2", v.NATBlkaddr + 512},
		{"sit-copy1", v.SITBlkaddr}, {"sit-copy2", v.SITBlkaddr + 512}, {"compact-summary", v.CPBlkaddr + 1},
		{"superblock", 0},
	}
	type bcase = struct {
		name string
		addr uint32
	}
	all := []struct {
		id    string
		cases []bcase
	}{{DemoID, cases}}
	// With ZRVIZ_BENCH_IMAGE (scripts/bench-image.sh): the 16 GiB image's /big.bin, its inode and its
	// first indirect node.
	if p := os.Getenv("ZRVIZ_BENCH_IMAGE"); p != "" {
		img, err := imgio.OpenFileContext(context.Background(), p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ts.AddImage("big", "bench.img", img); err != nil {
			b.Fatal(err)
		}
		f, err := img.Lookup("/big.bin")
		if err != nil {
			b.Fatal(err)
		}
		ext, err := f.Extents()
		if err != nil {
			b.Fatal(err)
		}
		ib, err := img.Block(context.Background(), f.Inode().Blkaddr)
		if err != nil {
			b.Fatal(err)
		}
		bc := []bcase{{"data", ext[len(ext)/2].Addr + uint32(ext[len(ext)/2].Count/2)}, {"inode", f.Inode().Blkaddr}}
		for _, l := range ib.Links {
			if l.Name == "i_nid[2]" {
				bc = append(bc, bcase{"indirect", l.Addr})
			}
		}
		all = append(all, struct {
			id    string
			cases []bcase
		}{"big", bc})
	}
	for _, im := range all {
		for _, c := range im.cases {
			benchBlockPage(b, ts, h, im.id, c.name, c.addr)
		}
	}
}

// benchBlockPage measures GET /images/{id}/blocks/{addr} through the handler.
func benchBlockPage(b *testing.B, ts *testServer, h http.Handler, id, name string, addr uint32) {
	url := ts.ts.URL + "/images/" + id + "/blocks/" + strconv.FormatUint(uint64(addr), 10)
	b.Run(id+"/"+name, func(b *testing.B) {
		size := 0
		start := procCPU()
		for b.Loop() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
			if rec.Code != 200 {
				b.Fatalf("status %d", rec.Code)
			}
			size = rec.Body.Len()
		}
		b.ReportMetric(float64((procCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(size), "bytes/page")
	})
}

// TestBlockLinksFromPages checks the ways into the inspector from the image and file pages: the
// go-to box, and the extents' and nodes' addresses.
func TestBlockLinksFromPages(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	doc, code := ts.getPage(t, "/images/demo")
	if code != 200 {
		t.Fatalf("image page: %d", code)
	}
	form := doc.Find(testid("image-goto"))
	if a, _ := form.Attr("action"); a != "/images/demo/blocks" || form.Find(`input[name="addr"]`).Length() != 1 {
		t.Errorf("go-to form action %q", a)
	}
	if doc.Find(testid("segment-links")).Length() != 1 {
		t.Error("no place for the segment's block links")
	}
	doc, code = ts.getPage(t, "/images/demo/file?path=/seed/bench64.bin")
	if code != 200 {
		t.Fatalf("file page: %d", code)
	}
	// imgio/demo/README.md: 3 runs, at 34304, 6144 and 19456; 17 dnodes.
	var got []string
	doc.Find(testid("extent-block")).Each(func(_ int, s *goquery.Selection) {
		h, _ := s.Attr("href")
		got = append(got, h)
	})
	if strings.Join(got, " ") != "/images/demo/blocks/34304 /images/demo/blocks/6144 /images/demo/blocks/19456" {
		t.Errorf("extent links %v", got)
	}
	if n := doc.Find(testid("dnode-block")).Length(); n != 17 {
		t.Errorf("%d node links, want 17", n)
	}
	if h, _ := doc.Find(testid("dnode-block")).First().Attr("href"); h != "/images/demo/blocks/4608" {
		t.Errorf("inode link %q", h)
	}
	if doc.Find(testid("slot-info")).Length() != 1 {
		t.Error("no slot-info line for #slot=N")
	}
}

// procCPU is the process's user+system CPU time: on the shared machine wall time per op swings with
// the load, CPU time much less.
func procCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
