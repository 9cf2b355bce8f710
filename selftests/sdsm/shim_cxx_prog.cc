// SPDX-License-Identifier: GPL-2.0
/*
 * An unmodified C++20 program of shim_tests.sh (plain g++ -pthread, no sdsm
 * header): libstdc++'s threads and synchronization.  Its std::thread,
 * std::mutex, std::condition_variable and std::shared_mutex are glibc's
 * pthread calls; std::atomic<>::wait/notify, std::barrier,
 * std::counting_semaphore, std::latch and the shared state of
 * std::future and std::async make futex(2) calls of their own, inline in
 * the program, on words in its globals and heap.
 *
 * shim_cxx_prog [THREADS [ROUNDS]] (default 6, 40): THREADS std::threads
 * add to counters under a std::mutex, a std::recursive_mutex and a
 * std::shared_mutex, pass ROUNDS items each through a std::deque under a
 * condition variable (even threads produce, odd ones consume: the items'
 * heap blocks are freed on another thread than the one that made them),
 * hand a token round a ring of std::atomic<int> with wait/notify_one, meet
 * ROUNDS times at a std::barrier whose completion step counts, keep at
 * most 2 inside a std::counting_semaphore<2>, count down a std::latch, run
 * one std::call_once and keep a thread_local count.  Then std::async
 * tasks, a std::promise that carries an exception to main, and a
 * std::jthread stopped through its std::stop_token while it waits on a
 * std::condition_variable_any.
 *
 * stdout holds only results, the same in a native run and in a job;
 * stderr tells which node each thread ran on and
 * std::thread::hardware_concurrency().  Exit status 1 if a result is
 * wrong.
 */
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

#include "plain_node.h"

namespace {

int nt = 6, rounds = 40;
int bad;

void check(bool ok, const char *what)
{
	if (!ok) {
		std::printf("wrong: %s\n", what);
		bad = 1;
	}
}

std::mutex plain_m;
long plain_count;
std::recursive_mutex rec_m;
long rec_count;
std::shared_mutex rw_m;
long rw_a, rw_b, torn;

std::mutex q_m;
std::condition_variable q_nonempty, q_nonfull;
std::deque<std::unique_ptr<long>> queue;
long consumed_sum;

/* The token ring: thread i waits until ring_turn is i, then passes it on. */
std::atomic<int> ring_turn;
std::atomic<long> ring_hops;

std::atomic<int> inside, most_inside;
std::counting_semaphore<2> sem(2);

std::once_flag once;
int once_runs;
thread_local long tls_count;
std::atomic<long> tls_sum;

void worker(int idx, std::barrier<std::function<void()>> &bar,
	    std::latch &done, std::vector<long> &slots)
{
	std::fprintf(stderr, "thread %d on node %d tid %ld\n", idx, node_id(),
		     (long)syscall(SYS_gettid));
	std::call_once(once, [] { once_runs++; });
	for (int r = 0; r < rounds; r++) {
		{
			std::lock_guard<std::mutex> g(plain_m);
			plain_count++;
		}
		{
			std::lock_guard<std::recursive_mutex> g1(rec_m);
			std::lock_guard<std::recursive_mutex> g2(rec_m);
			rec_count++;
		}
		if (r % 4 == 0) {
			std::unique_lock<std::shared_mutex> w(rw_m);
			rw_a++;
			rw_b++;
		} else {
			std::shared_lock<std::shared_mutex> rd(rw_m);
			if (rw_a != rw_b)
				torn++;	/* racy on purpose only if broken */
		}
		tls_count++;
	}
	tls_sum += tls_count;
	/* Even threads produce, odd ones consume, through a queue of 1. */
	for (int r = 0; r < rounds; r++) {
		std::unique_lock<std::mutex> l(q_m);
		if (idx % 2 == 0) {
			q_nonfull.wait(l, [] { return queue.empty(); });
			queue.push_back(std::make_unique<long>(idx * 1000L + r));
			q_nonempty.notify_all();
		} else {
			q_nonempty.wait(l, [] { return !queue.empty(); });
			consumed_sum += *queue.front();
			queue.pop_front();
			q_nonfull.notify_all();
		}
	}
	/* The token goes round the ring ROUNDS times. */
	for (int r = 0; r < rounds; r++) {
		int t;

		while ((t = ring_turn.load()) != idx)
			ring_turn.wait(t);
		ring_hops++;
		ring_turn.store((idx + 1) % nt);
		ring_turn.notify_all();
	}
	for (int r = 0; r < rounds; r++) {
		sem.acquire();
		int now = ++inside, m = most_inside.load();

		while (now > m && !most_inside.compare_exchange_weak(m, now))
			;
		--inside;
		sem.release();
		bar.arrive_and_wait();
	}
	slots[idx] = 100 + idx;
	done.count_down();
}

int tasks()
{
	std::vector<std::future<long>> f;
	long sum = 0;

	for (int i = 0; i < nt; i++)
		f.push_back(std::async(std::launch::async, [i] {
			long s = 0;

			for (int k = 0; k <= 1000 * (i + 1); k++)
				s += k;
			return s;
		}));
	for (auto &x : f)
		sum += x.get();
	std::printf("async sum %ld\n", sum);

	std::promise<int> p;
	std::future<int> pf = p.get_future();
	std::thread thrower([&p] {
		try {
			throw std::runtime_error("from a thread");
		} catch (...) {
			p.set_exception(std::current_exception());
		}
	});
	try {
		pf.get();
		check(false, "promise: no exception");
	} catch (const std::runtime_error &e) {
		std::printf("exception '%s'\n", e.what());
	}
	thrower.join();

	std::mutex m;
	std::condition_variable_any cv;
	std::atomic<int> waiting{0};
	bool stopped = false;
	std::jthread j([&](std::stop_token st) {
		std::unique_lock<std::mutex> l(m);
		waiting = 1;
		waiting.notify_all();
		stopped = cv.wait(l, st, [] { return false; }) == false &&
			  st.stop_requested();
	});
	waiting.wait(0);
	j.request_stop();
	j.join();
	std::printf("jthread stopped %s\n", stopped ? "yes" : "no");
	check(stopped, "jthread not stopped");
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc > 1)
		nt = std::atoi(argv[1]);
	if (argc > 2)
		rounds = std::atoi(argv[2]);
	if (nt < 2 || nt > 32 || nt % 2 || rounds < 1)
		return 2;
	std::fprintf(stderr, "hardware_concurrency %u\n",
		     std::thread::hardware_concurrency());

	long phases = 0;
	std::barrier<std::function<void()>> bar(nt, [&phases] { phases++; });
	std::latch done(nt);
	std::vector<long> slots(nt);
	std::vector<std::thread> t;

	for (int i = 0; i < nt; i++)
		t.emplace_back(worker, i, std::ref(bar), std::ref(done),
			       std::ref(slots));
	done.wait();
	for (auto &x : t)
		x.join();

	long want_sum = 0, slot_sum = 0;

	for (int i = 0; i < nt; i += 2)
		for (int r = 0; r < rounds; r++)
			want_sum += i * 1000L + r;
	for (long s : slots)
		slot_sum += s;
	std::printf("mutex %ld recursive %ld\n", plain_count, rec_count);
	std::printf("shared_mutex writes %ld torn %ld\n", rw_a, torn);
	std::printf("queue sum %ld %s\n", consumed_sum,
		    consumed_sum == want_sum ? "right" : "WRONG");
	std::printf("ring hops %ld\n", ring_hops.load());
	std::printf("barrier phases %ld semaphore of 2: at most 2 inside: %s\n",
		    phases, most_inside <= 2 ? "yes" : "no");
	std::printf("once %d tls %ld slots %ld\n", once_runs, tls_sum.load(),
		    slot_sum);
	check(plain_count == (long)nt * rounds, "mutex count");
	check(rec_count == (long)nt * rounds, "recursive count");
	check(!torn, "torn reads under std::shared_mutex");
	check(consumed_sum == want_sum, "queue sum");
	check(ring_hops == (long)nt * rounds, "ring hops");
	check(phases == rounds, "barrier phases");
	check(most_inside <= 2, "semaphore bound");
	check(once_runs == 1, "call_once");
	check(tls_sum == (long)nt * rounds, "thread_local");
	tasks();
	return bad;
}
