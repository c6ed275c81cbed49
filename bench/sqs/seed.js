// Seeds a dead-letter queue for this benchmark: the shared seeder, same arguments.
// Usage: node bench/sqs/seed.js URL QUEUE DLQ N
import '../redrive/seed.js'
