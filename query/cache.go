package query

import (
	lru "container/list"
	"sync"

	"github.com/parqdb/parqdb/postings"
)

// list is the decoded postings of one CID. It is immutable once cached.
type list struct {
	cid   int32
	batch postings.Batch
}

func (l *list) bytes() int64 {
	b := &l.batch
	return int64(len(b.Codes) + len(b.Keys) + 8*len(b.KeyEnds) + 4*(len(b.CIDs)+len(b.Offsets)+len(b.Scales)) + 64)
}

// cache holds decoded lists up to a byte budget, evicting the least
// recently used. It is safe for concurrent use.
type cache struct {
	mu struct {
		sync.Mutex
		byCID map[int32]*lru.Element
		lru   *lru.List // front = most recent; values are *entry
		size  int64
	}
	budget int64
}

type entry struct {
	l    *list
	size int64
}

func newCache(budget int64) *cache {
	c := &cache{budget: budget}
	c.mu.byCID = map[int32]*lru.Element{}
	c.mu.lru = lru.New()
	return c
}

func (c *cache) get(cid int32) *list {
	if c.budget < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.byCID[cid]
	if !ok {
		return nil
	}
	c.mu.lru.MoveToFront(e)
	return e.Value.(*entry).l
}

func (c *cache) put(l *list) {
	if c.budget < 0 {
		return
	}
	size := l.bytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.byCID[l.cid]; ok {
		return
	}
	c.mu.byCID[l.cid] = c.mu.lru.PushFront(&entry{l: l, size: size})
	c.mu.size += size
	for c.mu.size > c.budget && c.mu.lru.Len() > 1 {
		back := c.mu.lru.Back()
		e := back.Value.(*entry)
		c.mu.lru.Remove(back)
		delete(c.mu.byCID, e.l.cid)
		c.mu.size -= e.size
	}
}
