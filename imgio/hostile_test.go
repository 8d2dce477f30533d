package imgio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// listAll runs every listing over img and returns what each saw: Walk's entries and problems,
// Files' entries and error, and for dir, every page of ReadDir (pages of pageSize).
type listing struct {
	walk      []Entry
	walkProbs ListProblems
	files     []Entry
	filesErr  error
	pages     []DirPage
}

func listAll(tb testing.TB, img *Image, dir string, pageSize int) listing {
	tb.Helper()
	var l listing
	var err error
	l.walkProbs, err = img.Walk(context.Background(), func(e Entry) error {
		l.walk = append(l.walk, e)
		return nil
	})
	if err != nil {
		tb.Fatalf("Walk: %v", err)
	}
	l.files, l.filesErr = img.Files()
	if !slices.Equal(l.files, l.walk) {
		tb.Errorf("Files lists %d entries, Walk %d", len(l.files), len(l.walk))
	}
	if (l.walkProbs.Len() > 0) != (l.filesErr != nil) {
		tb.Errorf("Walk met %d problems, Files' error is %v", l.walkProbs.Len(), l.filesErr)
	}
	var le *ListError
	if l.filesErr != nil && (!errors.As(l.filesErr, &le) || le.Problems.Len() != l.walkProbs.Len()) {
		tb.Errorf("Files: %v, want a *ListError with Walk's %d problems", l.filesErr, l.walkProbs.Len())
	}
	after := ""
	for range 10000 {
		p, err := img.ReadDir(context.Background(), dir, after, pageSize)
		if err != nil {
			tb.Fatalf("ReadDir(%s, %q): %v", dir, after, err)
		}
		l.pages = append(l.pages, p)
		if !p.More {
			break
		}
		after = p.Next
	}
	return l
}

// under returns the entries of ents directly inside dir.
func under(ents []Entry, dir string) []Entry {
	var out []Entry
	for _, e := range ents {
		if len(e.Path) > len(dir)+1 && strings.HasPrefix(e.Path, dir+"/") && !strings.Contains(e.Path[len(dir)+1:], "/") {
			out = append(out, e)
		}
	}
	return out
}

// pageEntries joins the entries of all pages.
func pageEntries(pages []DirPage) []Entry {
	var out []Entry
	for _, p := range pages {
		out = append(out, p.Entries...)
	}
	return out
}

// wantFormatAt fails unless err is (or wraps) a *FormatError on structure st at byte off (off < 0:
// any offset).
func wantFormatAt(tb testing.TB, what string, err error, st string, off int64) {
	tb.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		tb.Fatalf("%s: %v, want a *FormatError", what, err)
	}
	if fe.Struct != st || (off >= 0 && fe.Off != off) {
		tb.Errorf("%s: FormatError %q at 0x%x (%v), want %q at 0x%x", what, fe.Struct, fe.Off, err, st, off)
	}
}

// TestHostileFanOut: 3,000 slots of one directory point at one dentry block of 214 entries. Every
// listing lists the 214 entries once and reports the block once, counted 2,999 times; lookups read
// the block once.
func TestHostileFanOut(t *testing.T) {
	s, dentry, _ := fanOutImage(t)
	h := openHostile(t, s)
	const dir = "/seed/bench64.bin"
	l := listAll(t, h.img, dir, 100)
	checkProbs := func(what string, ps ListProblems) {
		t.Helper()
		if ps.Len() != 1 || ps.List[0].Count != 2999 || ps.List[0].Path != dir {
			t.Fatalf("%s: problems %+v, want one at %s met 2,999 times", what, ps, dir)
		}
		wantFormatAt(t, what, ps.List[0], "dentry block", int64(dentry)*fuzzBS)
	}
	checkProbs("Walk", l.walkProbs)
	if got := under(l.walk, dir); len(got) != nrDentryInBlock {
		t.Errorf("Walk lists %d entries in %s, want %d", len(got), dir, nrDentryInBlock)
	}
	var le *ListError
	if !errors.As(l.filesErr, &le) {
		t.Fatalf("Files: %v, want a *ListError", l.filesErr)
	}
	checkProbs("Files", le.Problems)
	wantFormatAt(t, "Files' error", l.filesErr, "dentry block", int64(dentry)*fuzzBS)
	if len(l.pages) != 3 || len(l.pages[0].Entries) != 100 || l.pages[0].Next != "f099" || len(l.pages[2].Entries) != 14 {
		t.Errorf("ReadDir pages of 100: %d pages, first %d entries next %q", len(l.pages), len(l.pages[0].Entries), l.pages[0].Next)
	}
	if got := pageEntries(l.pages); !slices.Equal(got, under(l.walk, dir)) {
		t.Errorf("ReadDir's pages list %d entries, Walk %d", len(got), len(under(l.walk, dir)))
	}
	for i, p := range l.pages {
		checkProbs(fmt.Sprintf("ReadDir page %d", i), p.Problems)
		if p.Dir.Path != dir || p.Dir.Type != TypeDir {
			t.Errorf("page %d: Dir %+v", i, p.Dir)
		}
	}
	// Lookups: found or not, the dentry block is read once per call, not once per slot.
	for _, c := range []struct {
		path string
		ok   bool
	}{{dir + "/f213", true}, {dir + "/f000", true}, {dir + "/nope", false}} {
		for _, op := range []string{"Lookup", "Resolve"} {
			h.cr.reset()
			var err error
			if op == "Lookup" {
				_, err = h.img.Lookup(c.path)
			} else {
				_, err = h.img.Resolve(c.path)
			}
			if (err == nil) != c.ok || (!c.ok && !errors.Is(err, fs.ErrNotExist)) {
				t.Errorf("%s(%s): %v", op, c.path, err)
			}
			if n := h.cr.perBlock[int64(dentry)]; n != 1 {
				t.Errorf("%s(%s) read the dentry block %d times, want 1", op, c.path, n)
			}
		}
	}
}

// TestHostileChain: a chain of directories deeper than PATH_MAX allows. Every listing stops where
// the path would reach PathMax bytes and reports the entry it left out; lookups of the deepest
// listed path work and of a longer one are ENAMETOOLONG.
func TestHostileChain(t *testing.T) {
	for _, nameLen := range []int{255, 100, 27, 1} {
		t.Run(fmt.Sprint(nameLen), func(t *testing.T) {
			s, inos := chainImage(t, nameLen)
			h := openHostile(t, s)
			name := strings.Repeat("d", nameLen)
			// "/many" then one "/"+name per level, below PathMax.
			depth := min((PathMax-1-len("/many"))/(1+nameLen), len(inos)-1)
			deepest := "/many" + strings.Repeat("/"+name, depth)
			l := listAll(t, h.img, deepest, 0)
			var chain []Entry
			for _, e := range l.walk {
				if strings.HasPrefix(e.Path, "/many/") {
					chain = append(chain, e)
				}
			}
			if len(chain) != depth || chain[len(chain)-1].Path != deepest || chain[len(chain)-1].Ino != inos[depth] {
				t.Fatalf("Walk lists %d levels below /many, want %d", len(chain), depth)
			}
			wantProbs := 0
			if depth < len(inos)-1 {
				wantProbs = 1 // the next level's path would reach PathMax
			}
			if l.walkProbs.Len() != wantProbs {
				t.Fatalf("Walk: problems %+v, want %d", l.walkProbs, wantProbs)
			}
			if len(l.pages) != 1 || len(l.pages[0].Entries) != 0 || l.pages[0].Problems.Len() != wantProbs {
				t.Errorf("ReadDir(deepest): %+v, want no entries and %d problems", l.pages, wantProbs)
			}
			if wantProbs == 1 {
				p := l.walkProbs.List[0]
				var pe *fs.PathError
				if !errors.Is(p, ErrNameTooLong) || !errors.As(p, &pe) || len(p.Path) < PathMax || len(p.Path) >= PathMax+1+nameLen {
					t.Errorf("problem %v, want a *fs.PathError wrapping ErrNameTooLong for a path just over the bound", p)
				}
				if !errors.Is(l.pages[0].Problems.List[0], ErrNameTooLong) {
					t.Errorf("ReadDir's problem %v, want ErrNameTooLong", l.pages[0].Problems.List[0])
				}
			}
			for _, op := range []func(string) (*File, error){h.img.Lookup, h.img.Resolve} {
				if f, err := op(deepest); err != nil || f.Inode().Ino != inos[depth] || f.Path() != deepest {
					t.Errorf("deepest listed path: %v %v", f, err)
				}
				if wantProbs == 1 {
					_, err := op(deepest + "/" + name)
					var pe *fs.PathError
					if !errors.Is(err, ErrNameTooLong) || !errors.As(err, &pe) {
						t.Errorf("one level deeper: %v, want ENAMETOOLONG", err)
					}
				}
				// A name over NAME_MAX is ENAMETOOLONG too, as f2fs_lookup says.
				if _, err := op("/many/" + strings.Repeat("x", NameMax+1)); !errors.Is(err, ErrNameTooLong) {
					t.Errorf("256-byte name: %v, want ENAMETOOLONG", err)
				}
			}
		})
	}
}

// TestHostileSelfLoop: /emptydir holds "s", an entry for /emptydir itself, and "t" for /hello.txt.
// Listings report s once and go on; resolving /emptydir/s/s/.../t through 2,000 components is one
// step per component, and a 40 KB path is refused before any read.
func TestHostileSelfLoop(t *testing.T) {
	var self, hello uint32
	s := emptydirImage(t, func(good *Image) []tdirent {
		self, hello = mustLookup(t, good, "/emptydir").Ino, mustLookup(t, good, "/hello.txt").Ino
		return []tdirent{{"s", self, 2}, {"t", hello, 1}}
	})
	h := openHostile(t, s)
	l := listAll(t, h.img, "/emptydir", 0)
	if l.walkProbs.Len() != 1 {
		t.Fatalf("Walk problems %+v, want 1", l.walkProbs)
	}
	wantFormatAt(t, "Walk", l.walkProbs.List[0], "directory", -1)
	if got := under(l.walk, "/emptydir"); len(got) != 1 || got[0].Path != "/emptydir/t" {
		t.Errorf("Walk lists %v under /emptydir, want /emptydir/t only", got)
	}
	// ReadDir sees one directory: s is an ordinary entry there.
	if got := pageEntries(l.pages); len(got) != 2 || got[0].Ino != self || got[1].Ino != hello {
		t.Errorf("ReadDir lists %v", got)
	}

	long := "/emptydir" + strings.Repeat("/s", 2000) + "/t"
	for _, op := range []struct {
		name string
		fn   func(context.Context, string) (*File, error)
	}{{"Lookup", h.img.LookupContext}, {"Resolve", h.img.ResolveContext}} {
		h.cr.reset()
		f, err := op.fn(context.Background(), long)
		if err != nil || f.Inode().Ino != hello || f.Path() != long {
			t.Fatalf("%s(2,000 components): %v %v", op.name, f, err)
		}
		// The root, /emptydir and /hello.txt inodes and their NAT blocks: not one read per component.
		if h.cr.reads > 10 {
			t.Errorf("%s(2,000 components) made %d reads", op.name, h.cr.reads)
		}
		h.cr.reset()
		huge := "/emptydir" + strings.Repeat("/s", 20000)
		_, err = op.fn(context.Background(), huge)
		var pe *fs.PathError
		if !errors.Is(err, ErrNameTooLong) || !errors.As(err, &pe) || h.cr.reads != 0 {
			t.Errorf("%s(40 KB path): %v after %d reads, want ENAMETOOLONG before reading", op.name, err, h.cr.reads)
		}
		// Cancelled half way: it stops at the next component.
		p := &probeCtx{Context: context.Background(), c: h.cr, cancelAt: 1000}
		if _, err := op.fn(p, long); !errors.Is(err, context.Canceled) || p.calls != 1000 {
			t.Errorf("%s cancelled at the 1,000th check: %v after %d checks", op.name, err, p.calls)
		}
	}
}

// TestHostileEntries: damaged and duplicated entries of one directory, and a directory or dentry
// block reached from two directories. Each listing lists what is sound, once, and reports the rest.
func TestHostileEntries(t *testing.T) {
	type want struct {
		names    []string // listed under /emptydir, sorted
		walk     int      // problems Walk reports
		readDir  int      // problems ReadDir("/emptydir") reports
		structs  []string // FormatError structures of Walk's problems
		lookupOK map[string]uint32
	}
	cases := []struct {
		name string
		ents func(good *Image) []tdirent
		want func(good *Image) want
	}{
		{"duplicate names", func(good *Image) []tdirent {
			return []tdirent{{"same", mustLookup(t, good, "/hello.txt").Ino, 1}, {"same", mustLookup(t, good, "/link").Ino, 7}}
		}, func(good *Image) want {
			return want{[]string{"same"}, 1, 1, []string{"dentry"}, map[string]uint32{"same": mustLookup(t, good, "/hello.txt").Ino}}
		}},
		{"bad entries", func(good *Image) []tdirent {
			h := mustLookup(t, good, "/hello.txt").Ino
			return []tdirent{{"ok", h, 1}, {"bad/name", h, 1}, {"nul\x00", h, 1}, {"zero", 0, 1}, {"far", 0x7fffffff, 1}}
		}, func(good *Image) want {
			return want{[]string{"ok"}, 4, 4, []string{"dentry", "dentry", "dentry", "dentry"}, map[string]uint32{"ok": mustLookup(t, good, "/hello.txt").Ino}}
		}},
		{"unreadable inode", func(good *Image) []tdirent {
			// nid 2 is the meta inode: its NAT entry does not name it as an inode of its own.
			return []tdirent{{"ok", mustLookup(t, good, "/hello.txt").Ino, 1}, {"meta", good.Volume().RootIno - 1, 1}}
		}, func(good *Image) want {
			return want{[]string{"ok"}, 1, 1, nil, map[string]uint32{"ok": mustLookup(t, good, "/hello.txt").Ino}}
		}},
		{"directory reached twice", func(good *Image) []tdirent {
			return []tdirent{{"a-again", mustLookup(t, good, "/a").Ino, 2}, {"b-again", mustLookup(t, good, "/a/b").Ino, 2}}
		}, func(good *Image) want {
			// /a is listed first (names sort "/a" < "/emptydir"); the second links are reported.
			return want{nil, 2, 0, []string{"directory", "directory"}, map[string]uint32{"a-again": mustLookup(t, good, "/a").Ino}}
		}},
		{"more problems than kept", func(good *Image) []tdirent {
			var ents []tdirent
			for i := range 182 { // every slot of the inline area: 182 entries for inode 0
				ents = append(ents, tdirent{fmt.Sprint(i % 10), 0, 1})
			}
			return ents
		}, func(good *Image) want { return want{nil, 182, 182, nil, nil} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w want
			s := emptydirImage(t, func(good *Image) []tdirent {
				w = tc.want(good)
				return tc.ents(good)
			})
			h := openHostile(t, s)
			l := listAll(t, h.img, "/emptydir", 0)
			var names []string
			for _, e := range under(l.walk, "/emptydir") {
				names = append(names, e.Path[len("/emptydir/"):])
			}
			if !slices.Equal(names, w.names) {
				t.Errorf("Walk lists %q under /emptydir, want %q", names, w.names)
			}
			if l.walkProbs.Len() != w.walk || len(l.walkProbs.List) != min(w.walk, MaxListProblems) ||
				l.walkProbs.Dropped != max(0, w.walk-MaxListProblems) {
				t.Errorf("Walk: %d problems (%d kept, %d dropped), want %d", l.walkProbs.Len(), len(l.walkProbs.List), l.walkProbs.Dropped, w.walk)
			}
			for i, st := range w.structs {
				wantFormatAt(t, fmt.Sprintf("problem %d", i), l.walkProbs.List[i], st, -1)
			}
			if got := l.pages[0].Problems.Len(); got != w.readDir {
				t.Errorf("ReadDir: %d problems %+v, want %d", got, l.pages[0].Problems, w.readDir)
			}
			if w.names != nil {
				if got := pageEntries(l.pages); !slices.Equal(got, under(l.walk, "/emptydir")) {
					t.Errorf("ReadDir lists %v, Walk %v", got, under(l.walk, "/emptydir"))
				}
			}
			for name, ino := range w.lookupOK {
				for _, op := range []func(string) (*File, error){h.img.Lookup, h.img.Resolve} {
					if f, err := op("/emptydir/" + name); err != nil || f.Inode().Ino != ino {
						t.Errorf("lookup of %s: %v %v, want inode %d", name, f, err, ino)
					}
				}
			}
			// The report is JSON with the offsets of the damage.
			b, err := json.Marshal(l.walkProbs)
			if err != nil || (w.walk > 0 && !strings.Contains(string(b), `"offset"`) && w.structs != nil) {
				t.Errorf("problems as JSON: %s %v", b, err)
			}
		})
	}
}

// TestHostileSharedBlock: /emptydir's only slot points at /many's first dentry block. The walk reads
// the block once, for /emptydir (listed first), and reports it when /many reaches it again; /many
// still lists its second block. ReadDir of /many alone sees nothing wrong.
func TestHostileSharedBlock(t *testing.T) {
	base, good := loadSparse(t, "testdata/basic.img.gz")
	s := base.clone()
	many, err := good.Lookup("/many")
	if err != nil {
		t.Fatal(err)
	}
	ext, err := many.Extents()
	if err != nil || len(ext) == 0 || ext[0].State != StateAddr {
		t.Fatalf("/many extents %v %v", ext, err)
	}
	shared := ext[0].Addr
	ed := mustLookup(t, good, "/emptydir")
	s.put32(int64(ed.Blkaddr)*fuzzBS+inodeAddrOff+int64(ed.ExtraISize), shared)
	h := openHostile(t, s)
	l := listAll(t, h.img, "/many", 0)
	if l.walkProbs.Len() != 1 {
		t.Fatalf("Walk problems %+v, want 1", l.walkProbs)
	}
	wantFormatAt(t, "Walk", l.walkProbs.List[0], "dentry block", int64(shared)*fuzzBS)
	inEmpty, inMany := under(l.walk, "/emptydir"), under(l.walk, "/many")
	if len(inEmpty) == 0 || len(inEmpty)+len(inMany) != 150 {
		t.Errorf("Walk lists %d under /emptydir and %d under /many, want the 150 names once", len(inEmpty), len(inMany))
	}
	if got := pageEntries(l.pages); len(got) != 150 || l.pages[0].Problems.Len() != 0 {
		t.Errorf("ReadDir(/many) lists %d with problems %+v, want 150 and none", len(got), l.pages[0].Problems)
	}
}

// TestReadDirPages pages through /many of basic (150 entries in two dentry blocks) with every page
// size, and from `after` values that are not names.
func TestReadDirPages(t *testing.T) {
	_, good := loadSparse(t, "testdata/basic.img.gz")
	ents, err := good.Files()
	if err != nil {
		t.Fatal(err)
	}
	want := under(ents, "/many")
	for _, size := range []int{1, 2, 7, 149, 150, 151, MaxDirPage, 0, -1} {
		l := listing{}
		after := ""
		for range 200 {
			p, err := good.ReadDir(context.Background(), "/many", after, size)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(p.Entries); n > max(size, 0) && size > 0 || p.More && (p.Next != p.Entries[n-1].Path[len("/many/"):]) {
				t.Fatalf("page size %d: %d entries, more %v next %q", size, n, p.More, p.Next)
			}
			l.pages = append(l.pages, p)
			if !p.More {
				break
			}
			after = p.Next
		}
		if got := pageEntries(l.pages); !slices.Equal(got, want) {
			t.Errorf("page size %d: %d entries over %d pages, want %d", size, len(got), len(l.pages), len(want))
		}
	}
	p, err := good.ReadDir(context.Background(), "/many", "file-100.txt~", 10)
	if err != nil || len(p.Entries) != 10 || p.Entries[0].Path != "/many/file-101.txt" {
		t.Errorf("after a name that is not there: %v %v", p.Entries, err)
	}
	if p, err := good.ReadDir(context.Background(), "/many", "zzz", 10); err != nil || len(p.Entries) != 0 || p.More {
		t.Errorf("after the last name: %+v %v", p, err)
	}
	if _, err := good.ReadDir(context.Background(), "/hello.txt", "", 10); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadDir of a file: %v, want fs.ErrInvalid", err)
	}
	if _, err := good.ReadDir(context.Background(), "/nope", "", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir of a missing path: %v, want fs.ErrNotExist", err)
	}
	root, err := good.ReadDir(context.Background(), "/", "", 0)
	if err != nil || root.Dir.Path != "/" || !slices.Equal(root.Entries, under(ents, "")) {
		t.Errorf("ReadDir(/): %+v %v", root, err)
	}
}

// TestWalkSkip: fs.SkipDir on a directory skips it, on a file skips the rest of its directory;
// fs.SkipAll stops with no error; another error stops the walk and comes back.
func TestWalkSkip(t *testing.T) {
	img := openDemo(t)
	all, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	walk := func(fn func(Entry) error) ([]string, error) {
		var got []string
		_, err := img.Walk(context.Background(), func(e Entry) error {
			got = append(got, e.Path)
			return fn(e)
		})
		return got, err
	}
	got, err := walk(func(e Entry) error {
		if e.Path == "/cases" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil || slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, "/cases/") }) || len(got) >= len(all) {
		t.Errorf("SkipDir on /cases: %v %v", got, err)
	}
	first := under(all, "/cases")[0].Path
	got, err = walk(func(e Entry) error {
		if e.Path == first {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil || len(under(entriesOf(got), "/cases")) != 1 {
		t.Errorf("SkipDir on %s: %d entries left in /cases, %v", first, len(under(entriesOf(got), "/cases")), err)
	}
	if got, err = walk(func(e Entry) error { return fs.SkipAll }); err != nil || len(got) != 1 {
		t.Errorf("SkipAll: %v %v", got, err)
	}
	stop := errors.New("stop")
	n := 0
	if got, err = walk(func(e Entry) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || len(got) != 5 {
		t.Errorf("an error from fn: %d entries, %v", len(got), err)
	}
}

func entriesOf(paths []string) []Entry {
	out := make([]Entry, len(paths))
	for i, p := range paths {
		out[i].Path = p
	}
	return out
}

// TestListingContext: every listing and lookup checks its context between reads (at most a few reads
// apart: an inode and its NAT block, or one dentry block), and stops with the context's error.
func TestListingContext(t *testing.T) {
	s, _, _ := fanOutImage(t)
	h := openHostile(t, s)
	ops := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"Walk", func(ctx context.Context) error {
			_, err := h.img.Walk(ctx, func(Entry) error { return nil })
			return err
		}},
		{"FilesContext", func(ctx context.Context) error {
			_, err := h.img.FilesContext(ctx)
			var le *ListError
			if errors.As(err, &le) {
				return nil // the fan-out's problem: not what this test is about
			}
			return err
		}},
		{"ReadDir", func(ctx context.Context) error {
			_, err := h.img.ReadDir(ctx, "/seed/bench64.bin", "", 0)
			return err
		}},
		{"LookupContext", func(ctx context.Context) error {
			_, err := h.img.LookupContext(ctx, "/seed/bench64.bin/f213")
			return err
		}},
		{"ResolveContext", func(ctx context.Context) error {
			_, err := h.img.ResolveContext(ctx, "/docs/contiguous.link")
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			h.cr.reset()
			p := &probeCtx{Context: context.Background(), c: h.cr}
			if err := op.run(p); err != nil {
				t.Fatal(err)
			}
			if h.cr.maxGap > 4 {
				t.Errorf("%d reads between two checks of the context, want at most 4", h.cr.maxGap)
			}
			for _, at := range []int{1, 2, p.calls / 2, p.calls} {
				h.cr.reset()
				c := &probeCtx{Context: context.Background(), c: h.cr, cancelAt: max(at, 1)}
				if err := op.run(c); !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled at check %d of %d: %v", at, p.calls, err)
				}
				if h.cr.sinceCtx != 0 {
					t.Errorf("cancelled at check %d: %d reads after", at, h.cr.sinceCtx)
				}
			}
		})
	}
}

// BenchmarkReadDirFanOut pages through the fan-out directory (214 entries behind 3,000 slots), 100
// entries a page, as the web tree expands it.
func BenchmarkReadDirFanOut(b *testing.B) {
	s, _, _ := fanOutImage(b)
	h := openHostile(b, s)
	b.ReportAllocs()
	c := cpuTime()
	var pages int
	for b.Loop() {
		pages = 0
		for after := ""; ; pages++ {
			p, err := h.img.ReadDir(context.Background(), "/seed/bench64.bin", after, 100)
			if err != nil {
				b.Fatal(err)
			}
			if !p.More {
				break
			}
			after = p.Next
		}
	}
	reportCPU(b, c)
	b.ReportMetric(float64(pages+1), "pages")
}
