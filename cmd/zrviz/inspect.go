package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/units"
)

// imageFlag registers --image on fs; an empty value, or demoName, means the embedded demo image.
func imageFlag(fs interface {
	StringVar(p *string, name, value, usage string)
}) *string {
	var s string
	fs.StringVar(&s, "image", "", "F2FS image `IMG`: raw, gzip, xz, zstd or Android sparse; \"demo\" or none: the embedded demo")
	return &s
}

// demoName names the embedded demo image wherever a command takes an image (--image, diff's A and
// B, serve's IMG): the web calls it "demo" too (/images/demo). A file of that name is ./demo.
const demoName = "demo"

// openImage opens the image at name, or the embedded demo when name is empty or demoName: every
// command opens its images here, so each takes the demo the same way. Compressed and sparse input
// is expanded to a temporary file that Close removes; a raw image is only ever read. When ctx ends
// (Ctrl-C) during the expansion, it stops within one 256 KiB write and removes the partial file.
func openImage(ctx context.Context, name string) (*imgio.Image, error) {
	if name == "" || name == demoName {
		img, err := imgio.OpenDemo(nil)
		if err != nil {
			return nil, fmt.Errorf("the embedded demo image: %w", err)
		}
		return img, nil
	}
	return imgio.OpenFileContext(ctx, name, nil)
}

type inspectOutput struct {
	Volume imgio.Volume  `json:"volume"`
	Files  []imgio.Entry `json:"files"`
	// Problems is what the listing stepped over (a dentry block reached twice, a path over
	// PATH_MAX, an unreadable inode), as fsck.f2fs would report it.
	Problems []inspectProblem `json:"problems"`
}

type inspectProblem struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
	Error string `json:"error"`
}

func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("inspect", "inspect [--image IMG] [--json]", stderr)
	image := imageFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON: {\"volume\":{...},\"files\":[...]}")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("inspect takes no arguments, got %q", fs.Args())}
	}
	img, err := openImage(ctx, *image)
	if err != nil {
		return err
	}
	defer img.Close()
	var files []imgio.Entry
	probs, err := img.Walk(ctx, func(e imgio.Entry) error {
		files = append(files, e)
		return nil
	})
	if err != nil {
		return err
	}
	out := inspectOutput{Volume: img.Volume(), Files: files, Problems: []inspectProblem{}}
	for _, p := range probs.List {
		out.Problems = append(out.Problems, inspectProblem{Path: p.Path, Count: p.Count, Error: p.Err.Error()})
	}
	if probs.Dropped > 0 {
		out.Problems = append(out.Problems, inspectProblem{Count: probs.Dropped, Error: "more problems, not listed"})
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	if err := writeInspectText(stdout, img, files); err != nil {
		return err
	}
	if len(out.Problems) > 0 {
		fmt.Fprintf(stdout, "\nThe listing stepped over %d problem(s):\n", probs.Len())
		for _, p := range out.Problems {
			fmt.Fprintf(stdout, "  %s: %s", p.Path, p.Error)
			if p.Count > 1 {
				fmt.Fprintf(stdout, " (%d times)", p.Count)
			}
			fmt.Fprintln(stdout)
		}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeInspectText(w io.Writer, img *imgio.Image, files []imgio.Entry) error {
	v := img.Volume()
	fmt.Fprintf(w, "%s  (%s, %s)\n\n", img.Name(), img.Format(), units.Bytes(img.Size()))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	bs := int64(v.BlockSize)
	features := strings.Join(v.Features, ", ")
	if features == "" {
		features = "none (mkfs.f2fs defaults)"
	}
	rows := [][2]string{
		{"block size", fmt.Sprintf("%d bytes", v.BlockSize)},
		{"blocks", fmt.Sprintf("%s (%s)", units.Group(v.BlockCount), units.Bytes(int64(v.BlockCount)*bs))},
		{"segments", fmt.Sprintf("%s, %s in the main area from block %s; %d per section",
			units.Group(v.SegmentCount), units.Group(v.MainSegmentCount), units.Group(v.MainBlkaddr), v.SegsPerSec)},
		// Grouped as the segments line beside it groups the main area's first block.
		{"areas", fmt.Sprintf("cp %s · sit %s · nat %s · ssa %s · main %s · end %s",
			units.Group(v.CPBlkaddr), units.Group(v.SITBlkaddr), units.Group(v.NATBlkaddr), units.Group(v.SSABlkaddr),
			units.Group(v.MainBlkaddr), units.Group(v.MaxBlkaddr))},
		{"checkpoint", fmt.Sprintf("version %d (pack %d), flags %#x", v.CheckpointVersion, v.CheckpointPack, v.CheckpointFlags)},
		{"valid blocks", fmt.Sprintf("%s of %s usable (%s)", units.Group(v.ValidBlockCount), units.Group(v.UserBlockCount),
			units.Bytes(int64(v.ValidBlockCount)*bs))},
		{"nodes / inodes", fmt.Sprintf("%s / %s", units.Group(v.ValidNodeCount), units.Group(v.ValidInodeCount))},
		{"free segments", units.Group(v.FreeSegmentCount)},
		{"features", features},
	}
	var cur []string
	for _, c := range v.CurrentSegments {
		cur = append(cur, fmt.Sprintf("%s %d+%d", c.Type, c.Segno, c.Blkoff))
	}
	rows = append(rows, [2]string{"current segments", strings.Join(cur, " · ")})
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%s\n", r[0], r[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d paths\n", len(files))
	return writeTree(w, files)
}

// writeTree prints files (as Files returns them: "/" first, then depth first) as an indented tree with
// sizes and inode numbers, aligned in columns.
func writeTree(w io.Writer, files []imgio.Entry) error {
	sorted := append([]imgio.Entry(nil), files...)
	sort.SliceStable(sorted, func(i, j int) bool { return treeLess(sorted[i].Path, sorted[j].Path) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range sorted {
		depth := strings.Count(strings.Trim(f.Path, "/"), "/")
		name := path.Base(f.Path)
		if f.Path == "/" {
			depth, name = -1, "/"
		}
		indent := strings.Repeat("  ", depth+1)
		size := ""
		switch f.Type {
		case imgio.TypeDir:
			if f.Path != "/" {
				name += "/"
			}
		case imgio.TypeSymlink:
			name += "@"
			size = units.Bytes(f.Size)
		default:
			size = units.Bytes(f.Size)
		}
		fmt.Fprintf(tw, "%s%s\t%9s\tino %d\n", indent, name, size, f.Ino)
	}
	return tw.Flush()
}

// treeLess orders paths so that a directory's entries follow it directly: compare element by element.
func treeLess(a, b string) bool {
	ea, eb := strings.Split(strings.Trim(a, "/"), "/"), strings.Split(strings.Trim(b, "/"), "/")
	if a == "/" {
		return b != "/"
	}
	if b == "/" {
		return false
	}
	for i := 0; i < len(ea) && i < len(eb); i++ {
		if ea[i] != eb[i] {
			return ea[i] < eb[i]
		}
	}
	return len(ea) < len(eb)
}

type mapOutput struct {
	Path    string         `json:"path"`
	Ino     uint32         `json:"ino"`
	Size    int64          `json:"size"`
	Extents []imgio.Extent `json:"extents"`
}

func cmdMap(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("map", "map [--image IMG] [--json] PATH", stderr)
	image := imageFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON: {\"path\",\"ino\",\"size\",\"extents\":[...]}")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"map takes exactly one PATH inside the image, e.g. zrviz map /seed/bench64.bin"}
	}
	img, err := openImage(ctx, *image)
	if err != nil {
		return err
	}
	defer img.Close()
	f, err := img.Lookup(fs.Arg(0))
	if err != nil {
		return err
	}
	ext, err := f.Extents()
	if err != nil {
		return err
	}
	ino := f.Inode()
	if *asJSON {
		return writeJSON(stdout, mapOutput{Path: f.Path(), Ino: ino.Ino, Size: ino.Size, Extents: ext})
	}
	nodes, err := f.Dnodes()
	if err != nil {
		return err
	}
	return writeMapText(stdout, f, ext, nodes)
}

func writeMapText(w io.Writer, f *imgio.File, ext []imgio.Extent, nodes []imgio.Dnode) error {
	ino := f.Inode()
	var slots uint64
	for _, e := range ext {
		slots += e.Count
	}
	fmt.Fprintf(w, "%s  ino %d  %s  %s slots  i_blocks %s\n\n", f.Path(), ino.Ino, units.Bytes(ino.Size),
		units.Group(slots), units.Group(ino.Blocks))
	if ino.Inline&inlineData != 0 {
		fmt.Fprintf(w, "  inline data: %d bytes inside the inode, no data slots\n", ino.Size)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  slots\tcount\tstate\tblocks\n")
	for _, e := range ext {
		last := e.Index + e.Count - 1
		blocks := ""
		if e.State == "addr" {
			blocks = fmt.Sprintf("%d–%d", e.Addr, uint64(e.Addr)+e.Count-1)
			if e.Count == 1 {
				blocks = fmt.Sprint(e.Addr)
			}
		}
		// Slot indices grouped, as the header's slot count and the page are; block addresses as the
		// kernel prints them.
		fmt.Fprintf(tw, "  %s–%s\t%s\t%s\t%s\n", units.Group(e.Index), units.Group(last), units.Group(e.Count), e.State, blocks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(nodes) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", plural(len(nodes), "dnode"))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  node\tnid\tblock\tslots\n")
	for _, n := range nodes {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s–%s\n", n.Path, n.Nid, n.Blkaddr, units.Group(n.Start), units.Group(n.Start+uint64(n.Len)-1))
	}
	return tw.Flush()
}

// inlineData is i_inline's INLINE_DATA flag (f2fs_fs.h F2FS_INLINE_DATA).
const inlineData = 0x02
