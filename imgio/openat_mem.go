package imgio

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/zrviz/zrviz/internal/units"
)

// This file stands in for the static site's imgio/memory.go (LoadMemory, Options.MaxMemory,
// *MemoryError), which is written beside it on another branch: at the merge it goes, OpenAt calls
// LoadMemory with opt.MaxMemory, and the tests match *MemoryError instead of *memLimitError.

// defaultLocalMemory bounds the non-zero blocks of an expanded image held in memory: 192 MiB, so
// that a browser's worker holding one image stays within 256 MB.
const defaultLocalMemory int64 = 192 << 20

// loadMemoryBounded expands r with every check of [ExpandContext] into memory, keeping only the
// non-zero blocks (the expansion never writes an all-zero block), at most limit bytes of them.
func loadMemoryBounded(ctx context.Context, r io.Reader, name string, opt *Options, limit int64) (*Image, error) {
	m := &memBlocks{limit: limit, blocks: map[int64][]byte{}}
	format, size, err := ExpandContext(ctx, m, r, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.size = size
	img, err := NewImage(m, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	img.name, img.format = name, format
	return img, nil
}

// memLimitError reports non-zero blocks past the memory bound: Off is the output offset of the block
// that did not fit.
type memLimitError struct {
	Limit, Off int64
}

func (e *memLimitError) Error() string {
	return fmt.Sprintf("imgio: the image's non-zero blocks take more than %s of memory (the bound of an image "+
		"held in memory): stopped at byte %s of the expanded image", units.Bytes(e.Limit), units.Group(e.Off))
}

// memBlocks is an image held as its non-zero blocks: an io.WriterAt for the expansion, an io.ReaderAt
// for the reader (zeros where nothing was written).
type memBlocks struct {
	mu     sync.RWMutex
	limit  int64
	used   int64
	size   int64
	blocks map[int64][]byte // block index → expandBlock bytes
}

func (m *memBlocks) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for n < len(p) {
		at := off + int64(n)
		bi, in := at/expandBlock, int(at%expandBlock)
		b := m.blocks[bi]
		if b == nil {
			if m.used+expandBlock > m.limit {
				return n, &memLimitError{Limit: m.limit, Off: at}
			}
			b = make([]byte, expandBlock)
			m.blocks[bi] = b
			m.used += expandBlock
		}
		n += copy(b[in:], p[n:])
	}
	return n, nil
}

func (m *memBlocks) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("imgio: negative offset %d", off)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= m.size {
			return n, io.EOF
		}
		bi, in := at/expandBlock, int(at%expandBlock)
		end := min(len(p), n+expandBlock-in, n+int(m.size-at))
		if b := m.blocks[bi]; b != nil {
			copy(p[n:end], b[in:])
		} else {
			clear(p[n:end])
		}
		n = end
	}
	return n, nil
}
