package limitmath_test

import (
	"fmt"
	"time"

	"github.com/openload/openload/limitmath"
)

// 100 requests a second against a limit of 120 a second split over 8
// shards, with random routing and 2 retries: a shard window overflows one
// time in four, and 6 requests a second are rejected at 83% of the limit.
func ExamplePredict() {
	p, err := limitmath.Predict(limitmath.PoissonInput{
		Rate:    100,
		Limit:   120,
		Shards:  8,
		Window:  time.Second,
		Routing: limitmath.RoutingRandom,
		Retries: 2,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range p.Lines() {
		fmt.Println(line)
	}
	// Output:
	// offered          100/s, Poisson
	// limit            120/s over 8 shards, 1s windows, random routing
	// per shard        15 a window = ⌊120/s × 1s / 8⌋ (in effect 120/s in all)
	// retries          up to 2 a request, attempts taken as independent
	// attempts         106.116/s with retries (fixed point in 16 steps)
	// shard window     mean 13.264 attempts; P(more than 15) = 0.2603
	// rejected (429)   6.135/s, 5.78% of attempts
	// failed requests  0.0193% (all 3 attempts rejected)
}

func ExamplePoissonTail() {
	// A shard allowing 15 requests a window that gets 12.5 on average.
	pOver, excess := limitmath.PoissonTail(12.5, 15)
	fmt.Printf("P(N > 15) = %.4f, E[(N − 15)+] = %.4f\n", pOver, excess)
	// Output:
	// P(N > 15) = 0.1940, E[(N − 15)+] = 0.5275
}
