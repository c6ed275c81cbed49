// Seeds a dead-letter queue for this benchmark: the shared seeder, same arguments.
// Usage: node bench/artemis/seed.js URL QUEUE N
import '../redrive/seed.js'
