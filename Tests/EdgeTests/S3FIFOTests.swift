import Foundation
import Testing

@testable import FolioEdge

/// S3-FIFO against plain LRU on the same traces, and its byte accounting.
@Suite("S3-FIFO eviction")
struct S3FIFOTests {
    /// Plain LRU by bytes: the reference S3-FIFO must beat on skewed traffic.
    struct LRU {
        let capacity: Int
        var lastUsed: [Int: Int] = [:]
        var sizes: [Int: Int] = [:]
        var order: [(key: Int, tick: Int)] = []
        var head = 0
        var tick = 0
        var bytes = 0

        mutating func access(_ key: Int, size: Int) -> Bool {
            tick += 1
            order.append((key, tick))
            if lastUsed[key] != nil {
                lastUsed[key] = tick
                return true
            }
            lastUsed[key] = tick
            sizes[key] = size
            bytes += size
            while bytes > capacity, head < order.count {
                let (k, t) = order[head]
                head += 1
                if lastUsed[k] == t, k != key {
                    lastUsed[k] = nil
                    bytes -= sizes.removeValue(forKey: k)!
                }
            }
            return false
        }
    }

    /// A seeded Zipf(s) sampler over keys 0..<n (inverse CDF by binary search).
    struct Zipf {
        var cdf: [Double] = []
        var state: UInt64

        init(n: Int, s: Double, seed: UInt64) {
            var sum = 0.0
            for k in 1...n {
                sum += 1 / pow(Double(k), s)
                cdf.append(sum)
            }
            cdf = cdf.map { $0 / sum }
            state = seed
        }

        mutating func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let u = Double(state >> 11) / Double(1 << 53)
            var lo = 0
            var hi = cdf.count - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if cdf[mid] < u { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
    }

    static func hitRatios(keys: Int, capacity: Int, requests: Int, seed: UInt64, size: (Int) -> Int = { _ in 1 }) -> (s3fifo: Double, lru: Double) {
        var zipf = Zipf(n: keys, s: 1.0, seed: seed)
        var fifo = S3FIFO<Int>(capacity: capacity)
        var lru = LRU(capacity: capacity)
        var fifoHits = 0
        var lruHits = 0
        for _ in 0..<requests {
            // Scattered ids, so that popularity does not follow insertion order.
            let key = (zipf.next() &* 2_654_435_761) % 1_000_003
            if fifo.contains(key) {
                fifo.hit(key)
                fifoHits += 1
            } else {
                _ = fifo.insert(key, size: size(key))
            }
            if lru.access(key, size: size(key)) { lruHits += 1 }
        }
        return (Double(fifoHits) / Double(requests), Double(lruHits) / Double(requests))
    }

    @Test("Zipf(1.0), a tenth of the keys fit: S3-FIFO hits more than LRU, on several seeds")
    func beatsLRUOnZipf() {
        for seed: UInt64 in [1, 2, 3] {
            let (fifo, lru) = Self.hitRatios(keys: 20_000, capacity: 2_000, requests: 300_000, seed: seed)
            #expect(fifo > lru + 0.01, "seed \(seed): S3-FIFO \(fifo), LRU \(lru)")
            #expect(fifo > 0.6, "seed \(seed): \(fifo)")
        }
    }

    @Test("sizes in bytes: objects of 1 to 64 KB, memory at a tenth; the bytes never pass the capacity")
    func bytesBounded() {
        let capacity = 4 << 20
        var fifo = S3FIFO<Int>(capacity: capacity)
        var zipf = Zipf(n: 2_000, s: 1.0, seed: 9)
        var held: [Int: Int] = [:]
        for _ in 0..<50_000 {
            let key = zipf.next()
            let size = 1024 + (key * 7919) % (63 * 1024)
            if fifo.contains(key) {
                fifo.hit(key)
                continue
            }
            held[key] = size
            for gone in fifo.insert(key, size: size) {
                #expect(gone != key)
                held[gone] = nil
            }
            #expect(fifo.bytes <= capacity)
            #expect(fifo.bytes == held.values.reduce(0, +))
            #expect(fifo.count == held.count)
        }
        let (s3, lru) = Self.hitRatios(keys: 2_000, capacity: capacity / 4, requests: 100_000, seed: 4) { 1024 + ($0 * 7919) % (63 * 1024) }
        #expect(s3 > lru, "S3-FIFO \(s3), LRU \(lru)")
    }

    @Test("a scan of one-time keys does not flush keys hit before; a ghost comes back to the main queue")
    func scanResistance() {
        var fifo = S3FIFO<Int>(capacity: 100)
        for k in 0..<50 { _ = fifo.insert(k, size: 1) }
        for k in 0..<50 { fifo.hit(k) }
        for k in 1000..<3000 { _ = fifo.insert(k, size: 1) }
        let kept = (0..<50).filter { fifo.contains($0) }.count
        #expect(kept == 50, "hot keys kept: \(kept)")
        // 2900 was evicted from the small queue unhit: a ghost, so stored again it goes to main.
        #expect(!fifo.contains(2900))
        _ = fifo.insert(2900, size: 1)
        for k in 5000..<5200 { _ = fifo.insert(k, size: 1) }
        #expect(fifo.contains(2900), "a ghost stored again goes to the main queue and outlives a scan")
    }

    @Test("resizing and removing keep the sums; an item larger than the capacity evicts the rest, never itself")
    func accounting() {
        var fifo = S3FIFO<String>(capacity: 1000)
        _ = fifo.insert("a", size: 100)
        _ = fifo.insert("b", size: 200)
        _ = fifo.insert("a", size: 300)
        #expect(fifo.bytes == 500 && fifo.count == 2)
        let removed = fifo.remove("b")
        let again = fifo.remove("b")
        #expect(removed && !again)
        #expect(fifo.bytes == 300)
        let evicted = fifo.insert("huge", size: 5000)
        #expect(evicted == ["a"] && fifo.contains("huge") && fifo.count == 1)
        // The next insert makes room: the oversized key goes first.
        #expect(fifo.insert("k", size: 1) == ["huge"])
        for i in 0..<10_000 {
            _ = fifo.insert("k\(i)", size: 1)
            fifo.remove("k\(i)")
        }
        #expect(fifo.count == 1 && fifo.bytes == 1)
    }
}
