// Command growth measures the worst pause of the structures a submit grows:
// it inserts -n players (10M by default) one by one into a board's rank index
// (rank.Index.Put, with dense or sparse player ids; and sparse ids arriving
// on a loaded dense board, which switches its lookup's form) and into the server's
// player id table (intern.Table.Intern), timing every single insert, and
// prints the maximum and the tail percentiles. A table that grows by copying
// itself whole shows up as a handful of inserts that take milliseconds to
// hundreds of milliseconds; incremental growth keeps every insert short.
//
//	go run ./bench/growth -n 10000000 -what index-dense,index-sparse,index-switch,intern
//
// Each structure runs in a fresh heap (a GC between them). Every insert is
// timed twice: by the wall clock, which on a shared machine also counts the
// time the thread was descheduled, and by the thread's CPU clock, which
// counts only the work the insert did on it (GC assists and page faults
// included). The report also gives the longest stop-the-world GC pause.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/podiumhq/podium/intern"
	"github.com/podiumhq/podium/rank"
)

func main() {
	runtime.LockOSThread() // threadCPU reads this thread's clock
	n := flag.Int("n", 10_000_000, "players to insert")
	slow := flag.Int("slow", 0, "also print the positions of this many slowest inserts")
	what := flag.String("what", "index-dense,index-sparse,index-switch,intern", "comma-separated structures: index-dense, index-sparse, index-switch, index-densify, intern")
	flag.Parse()
	fmt.Printf("# go run ./bench/growth -n %d -what %s (%s, GOMAXPROCS %d)\n", *n, *what, runtime.Version(), runtime.GOMAXPROCS(0))
	fmt.Println("| structure | inserts | total | p50 | p99 | p99.9 | p99.99 | max | inserts > 1 ms | > 10 ms | longest GC pause |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, w := range strings.Split(*what, ",") {
		var run func(lat, cpu []time.Duration)
		switch w {
		case "index-dense":
			run = func(lat, cpu []time.Duration) { index(lat, cpu, false) }
		case "index-sparse":
			run = func(lat, cpu []time.Duration) { index(lat, cpu, true) }
		case "index-switch":
			run = func(lat, cpu []time.Duration) { indexSwitch(lat, cpu, *n) }
		case "index-densify":
			run = func(lat, cpu []time.Duration) { indexDensify(lat, cpu, *n) }
		case "intern":
			run = internTable
		default:
			fmt.Fprintf(os.Stderr, "growth: unknown structure %q\n", w)
			os.Exit(2)
		}
		count := *n
		if w == "index-switch" {
			count = *n / 100
		} else if w == "index-densify" {
			count = *n * 4 / 10
		}
		lat, cpu := make([]time.Duration, count), make([]time.Duration, count)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		run(lat, cpu)
		total := time.Since(start)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if *slow > 0 {
			printSlow(w+" wall", lat, *slow)
			printSlow(w+" cpu", cpu, *slow)
		}
		report(w+", wall", lat, total, gcMax(&before, &after))
		report(w+", thread CPU", cpu, total, gcMax(&before, &after))
	}
}

// index puts n new players into one 1-key board, as the board's writer
// does for first submissions: dense ids are 0..n-1 (a board holding most of
// the server's players), sparse ones are scattered over the 31-bit range.
func index(lat, cpu []time.Duration, sparse bool) {
	x := rank.New([]bool{true})
	r := rand.New(rand.NewPCG(1, 2))
	for i := range lat {
		p := uint32(i)
		if sparse {
			p = uint32(i) * 2654435761 % (1 << 31) // odd multiplier: one to one
		}
		e := rank.Entry{Player: p, Keys: [4]int64{r.Int64N(1_000_000)}, At: int64(i), Seq: uint64(i)}
		t, c := time.Now(), threadCPU()
		x.Put(e)
		lat[i], cpu[i] = time.Since(t), threadCPU()-c
	}
	runtime.KeepAlive(x)
}

// indexSwitch loads a board with n players of dense ids (untimed), then
// puts n/100 players with ids scattered over the 31-bit range, timing each:
// the first one switches the player lookup from its dense to its hashed
// form.
func indexSwitch(lat, cpu []time.Duration, n int) {
	x := rank.New([]bool{true})
	r := rand.New(rand.NewPCG(1, 2))
	es := make([]rank.Entry, n)
	for i := range es {
		es[i] = rank.Entry{Player: uint32(i), Keys: [4]int64{r.Int64N(1_000_000)}, At: int64(i), Seq: uint64(i)}
	}
	x.Load(es)
	es = nil
	runtime.GC()
	for i := range lat {
		p := uint32(n+i)*2654435761%(1<<31) | 1<<30
		e := rank.Entry{Player: p, Keys: [4]int64{r.Int64N(1_000_000)}, At: int64(n + i), Seq: uint64(n + i)}
		t, c := time.Now(), threadCPU()
		x.Put(e)
		lat[i], cpu[i] = time.Since(t), threadCPU()-c
	}
	runtime.KeepAlive(x)
}

// indexDensify loads a board with 0.9n players whose ids are multiples of
// 4 (too sparse for the dense form: hashed), then puts 0.4n players with
// ids 4i+1 and 4i+2, timing each: once the board holds about a third as
// many players as its id range, its lookup switches to the dense form.
func indexDensify(lat, cpu []time.Duration, n int) {
	x := rank.New([]bool{true})
	r := rand.New(rand.NewPCG(1, 2))
	es := make([]rank.Entry, n*9/10)
	for i := range es {
		es[i] = rank.Entry{Player: uint32(4 * i), Keys: [4]int64{r.Int64N(1_000_000)}, At: int64(i), Seq: uint64(i)}
	}
	x.Load(es)
	es = nil
	runtime.GC()
	m := n * 9 / 10
	for i := range lat {
		p := uint32(4*(i%m) + 1 + i/m)
		e := rank.Entry{Player: p, Keys: [4]int64{r.Int64N(1_000_000)}, At: int64(n + i), Seq: uint64(n + i)}
		t, c := time.Now(), threadCPU()
		x.Put(e)
		lat[i], cpu[i] = time.Since(t), threadCPU()-c
	}
	runtime.KeepAlive(x)
}

// internTable interns n distinct 13-byte player ids, as first submissions
// of new players do.
func internTable(lat, cpu []time.Duration) {
	t := intern.New(1024)
	buf := []byte("player-")
	for i := range lat {
		s := string(strconv.AppendInt(buf[:7], int64(i)*7919, 36))
		start, c := time.Now(), threadCPU()
		t.Intern(s)
		lat[i], cpu[i] = time.Since(start), threadCPU()-c
	}
	runtime.KeepAlive(t)
}

// gcMax returns the longest stop-the-world GC pause between two snapshots
// (the runtime keeps the last 256).
func gcMax(before, after *runtime.MemStats) time.Duration {
	var m uint64
	for g := before.NumGC; g < after.NumGC && after.NumGC-g <= 256; g++ {
		m = max(m, after.PauseNs[g%256])
	}
	return time.Duration(m)
}

func report(name string, lat []time.Duration, total, gc time.Duration) {
	over := func(d time.Duration) int {
		k := 0
		for _, l := range lat {
			if l > d {
				k++
			}
		}
		return k
	}
	over1, over10 := over(time.Millisecond), over(10*time.Millisecond)
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[min(len(lat)-1, int(f*float64(len(lat))))] }
	fmt.Printf("| %s | %d | %.2f s | %v | %v | %v | %v | %v | %d | %d | %v |\n",
		name, len(lat), total.Seconds(), q(0.5), q(0.99), q(0.999), q(0.9999), lat[len(lat)-1], over1, over10, gc)
}

// printSlow prints the k slowest inserts with their position (the number of
// players already held), to tell growth steps from scheduling noise.
func printSlow(name string, lat []time.Duration, k int) {
	pos := make([]int, len(lat))
	for i := range pos {
		pos[i] = i
	}
	slices.SortFunc(pos, func(a, b int) int { return int(lat[b] - lat[a]) })
	pos = pos[:min(k, len(pos))]
	slices.Sort(pos)
	var b strings.Builder
	for _, i := range pos {
		fmt.Fprintf(&b, " %d:%v", i, lat[i].Round(10*time.Microsecond))
	}
	fmt.Fprintf(os.Stderr, "%s slowest at:%s\n", name, b.String())
}
