package player

import (
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/glossary"
)

func stopOf(o *Outline, kind string) *Stop {
	for k := range o.Stops {
		if o.Stops[k].Kind == kind {
			return &o.Stops[k]
		}
	}
	return nil
}

// TestFillZeroSaysInPlace: on the fixtures' volume (120 main segments, at most
// SMALL_VOLUME_SEGMENTS) f2fs_tuning_parameters sets ipu_policy F2FS_IPU_FORCE, and kernel case 2
// (zero /cases/indirect.bin 3146962 8912896) wrote both partial pages back in place: they kept
// their addresses. The tour must say so, not "out of place"; past 16 GB the default policy writes
// out of place.
func TestFillZeroSaysInPlace(t *testing.T) {
	spec := demoSpec(t, "/cases/indirect.bin", core.PerBlock, core.Batched)
	spec.Request = core.Request{Offset: 3146962, Length: 8912896}
	o := build(t, spec)
	s := stopOf(o, StopFillZero)
	if s == nil {
		t.Fatal("no fill-zero stop")
	}
	if !strings.Contains(s.Text, "in place") || strings.Contains(s.Text, "out of place") || !strings.Contains(s.Text, "F2FS_IPU_FORCE") {
		t.Errorf("fill-zero stop on a 256 MiB volume: %q", s.Text)
	}
	if big := writebackText(16*512 + 1); !strings.Contains(big, "out of place") {
		t.Errorf("past 16 GB: %q", big)
	}
	// SMALL_VOLUME_SEGMENTS itself is still small (the kernel's test is <=), written out here so a
	// wrong constant in internal/f2fs or core shows.
	if at := writebackText(16 * 512); !strings.Contains(at, "in place") || strings.Contains(at, "out of place") {
		t.Errorf("at 16 GB: %q", at)
	}
	for _, e := range glossary.All() {
		if e.Slug == "fill-zero" && (!strings.Contains(e.Text, "in place") || !strings.Contains(e.Source, "SMALL_VOLUME_SEGMENTS")) {
			t.Errorf("glossary fill-zero: %q / %q", e.Text, e.Source)
		}
	}
}

// TestRefusedBeforeF2FS: length 0 (kernel case 10) is vfs_fallocate's -EINVAL (fs/open.c checks
// offset < 0 || len <= 0 first), an offset past s_maxbytes its -EFBIG, and a directory (kernel
// case 11) never gets past open(O_RDWR): -EISDIR. None of them is f2fs_zero_range's answer, and a
// run without a single call does not claim batching "saved nothing because every run is one block".
func TestRefusedBeforeF2FS(t *testing.T) {
	for _, c := range []struct {
		path  string
		req   core.Request
		errno string
		by    string
	}{
		{"/cases/contiguous.bin", core.Request{Offset: 0, Length: 0}, "EINVAL", "vfs_fallocate"},
		{"/cases/contiguous.bin", core.Request{Offset: -4096, Length: 4096}, "EINVAL", "vfs_fallocate"},
		{"/cases/contiguous.bin", core.Request{Offset: 999999999999999, Length: 4096}, "EFBIG", "vfs_fallocate"},
		{"/docs", core.Request{Offset: 0, Length: 4096}, "EISDIR", "open"},
	} {
		spec := demoSpec(t, c.path, core.PerBlock, core.Batched)
		spec.Request = c.req
		o := build(t, spec)
		end := stopOf(o, StopEnd)
		if want := "Done: " + c.by + " returns -" + c.errno; end == nil || end.Title != want {
			t.Errorf("%s %+v: end stop %+v, want %q", c.path, c.req, end, want)
		}
		if end != nil && strings.Contains(end.Text, "one block long") {
			t.Errorf("%s %+v: %q", c.path, c.req, end.Text)
		}
		if o.Range.End != o.Range.Start {
			t.Errorf("%s %+v: range %+v for a refused request", c.path, c.req, o.Range)
		}
		p, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Goto(o.Total); err != nil {
			t.Fatal(err)
		}
		for _, st := range p.State(&Tracker{}, true) {
			if st.Errno != c.errno || st.ReturnedBy != c.by || st.Narration != c.by+" returns -"+c.errno {
				t.Errorf("%s %+v: %s ends %q by %q: %q", c.path, c.req, st.Mode, st.Errno, st.ReturnedBy, st.Narration)
			}
		}
	}
	// The holes of /cases/holes.bin (pages 64–127): slots reserved, nothing to invalidate.
	spec := demoSpec(t, "/cases/holes.bin", core.PerBlock, core.Batched)
	spec.Request = core.Request{Offset: 64 * 4096, Length: 64 * 4096}
	end := stopOf(build(t, spec), StopEnd)
	if end == nil || strings.Contains(end.Text, "one block long") || !strings.Contains(end.Text, "no run to batch") {
		t.Errorf("no runs: %+v", end)
	}
}

// TestStartNarrationNamesTheVFS: the first step of every run says the VFS checks come first
// (vfs_fallocate in fs/open.c), so a refused request never claims to have entered f2fs.
func TestStartNarrationNamesTheVFS(t *testing.T) {
	spec := demoSpec(t, "/cases/contiguous.bin", core.PerBlock)
	spec.Request = core.Request{Length: 0}
	p, err := New(build(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Goto(1); err != nil {
		t.Fatal(err)
	}
	if n := p.State(&Tracker{}, true)[0].Narration; !strings.Contains(n, "vfs_fallocate checks the arguments before f2fs_fallocate") {
		t.Errorf("step 1: %q", n)
	}
}

// TestGlossaryNamesTheVFS: EINVAL and EFBIG are vfs_fallocate's (fs/open.c: offset < 0 || len <= 0;
// offset + len past s_maxbytes), EISDIR open(2)'s may_open (a directory opened for writing), and
// EOPNOTSUPP is f2fs_fallocate's for compressed or pinned files but vfs_fallocate's for flags.
func TestGlossaryNamesTheVFS(t *testing.T) {
	want := map[string][]string{
		"einval":     {"vfs_fallocate", "offset < 0 || len <= 0"},
		"efbig":      {"vfs_fallocate", "s_maxbytes"},
		"eisdir":     {"may_open", "open(O_RDWR)"},
		"eopnotsupp": {"f2fs_fallocate", "vfs_fallocate"},
	}
	for slug, words := range want {
		e, ok := glossary.Lookup(slug)
		if !ok {
			t.Errorf("no glossary entry %q", slug)
			continue
		}
		for _, w := range words {
			if !strings.Contains(e.Text+" "+e.Source, w) {
				t.Errorf("%s does not say %q: %q / %q", slug, w, e.Text, e.Source)
			}
		}
	}
}
