package io.ductor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs the same body on several threads released at the same instant, and collects their
 * results.
 */
public final class Concurrently {

	/** The body one thread runs. */
	@FunctionalInterface
	public interface Body<T> {

		T run(int thread) throws Exception;

	}

	private Concurrently() {
	}

	/**
	 * Run {@code body} on {@code threads} threads that start together; rethrow the first
	 * failure.
	 * @return each thread's result, in thread order
	 */
	public static <T> List<T> run(int threads, Body<T> body) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch ready = new CountDownLatch(threads);
			CountDownLatch go = new CountDownLatch(1);
			List<Future<T>> futures = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				int thread = i;
				futures.add(executor.submit(() -> {
					ready.countDown();
					go.await();
					return body.run(thread);
				}));
			}
			ready.await();
			go.countDown();
			List<T> results = new ArrayList<>();
			for (Future<T> future : futures) {
				results.add(future.get(5, TimeUnit.MINUTES));
			}
			return results;
		}
		finally {
			executor.shutdownNow();
		}
	}

}
