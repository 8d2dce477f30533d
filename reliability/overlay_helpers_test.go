package reliability

import "io"

// Patch is bytes written over the original at Off.
type Patch struct {
	Off  int64
	Data []byte
}

// Overlay is a copy-on-write view of a shared original: reads see the
// original with Patches applied on top, cut at Size. The original is never
// written, so thousands of corrupt variants of one 256 MiB image cost a
// few bytes each.
type Overlay struct {
	Base    io.ReaderAt
	Size    int64
	Patches []Patch // applied in order; later ones win where they overlap
}

// ReadAt implements [io.ReaderAt].
func (o *Overlay) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if off >= o.Size {
		return 0, io.EOF
	}
	want := len(p)
	if int64(want) > o.Size-off {
		p = p[:o.Size-off]
	}
	n, err := o.Base.ReadAt(p, off)
	if err != nil && err != io.EOF {
		return n, err
	}
	if n < len(p) {
		// A patch may extend the image past the original's end; read
		// zeros there.
		clear(p[n:])
	}
	end := off + int64(len(p))
	for _, pt := range o.Patches {
		ps, pe := pt.Off, pt.Off+int64(len(pt.Data))
		if pe <= off || ps >= end {
			continue
		}
		lo, hi := max(ps, off), min(pe, end)
		copy(p[lo-off:hi-off], pt.Data[lo-ps:hi-ps])
	}
	if len(p) < want {
		return len(p), io.EOF
	}
	return len(p), nil
}

// Bytes returns the whole overlaid image as one slice (for uploads and
// files on disk); only for small images.
func (o *Overlay) Bytes() []byte {
	b := make([]byte, o.Size)
	n, _ := o.ReadAt(b, 0)
	return b[:n]
}
