package web

// What the tests read of the memory budget and the outline cache; the product only reserves and
// releases.

// inUse returns the bytes reserved now.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// markHigh starts measuring the most reserved at once from now, and returns what is reserved now.
func (b *budget) markHigh() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.high = b.used
	return b.used
}

// highSince is the most reserved at once since markHigh.
func (b *budget) highSince() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.high
}

// charged returns the bytes the cached outlines hold of the budget.
func (c *outlineCache) charged() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, e := range c.m {
		n += e.charged
	}
	return n
}

// drop forgets every kept input, giving back what they held.
func (c *resolvedCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget.give(c.charged)
	c.charged = 0
	c.m, c.order = map[string]resolvedEntry{}, nil
}
