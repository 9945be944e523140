package io.ductor.worker.internal;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.task.VirtualThreadTaskExecutor;

/**
 * Every thread Ductor makes, made one way: named {@code ductor-…}, one daemon rule, one
 * shared scheduler, and one deadline for stopping them all.
 * <ul>
 * <li><b>Daemon rule.</b> Ductor's platform threads are not daemon threads, like the
 * threads of Spring Boot's own task executor and scheduler: an application whose only
 * work is Ductor's (a worker instance with no web server) keeps running until its context
 * closes, and the context's close (Boot's shutdown hook included) stops every one of them
 * in order through {@code SmartLifecycle}: claiming first, then the running effects,
 * their outcomes, the heartbeat, the periodic workers, the notification listener. Virtual
 * threads are always daemon threads; with them, the platform threads that remain (the
 * scheduler, the claim and completion threads) still keep the application alive.</li>
 * <li><b>Virtual threads.</b> With {@code spring.threads.virtual.enabled=true} on Java 21
 * or later (Spring Boot's {@code Threading.VIRTUAL}), the threads that run work (the
 * effect attempts and the rounds of the periodic workers) are virtual threads. Their
 * number stays bounded: effects by {@code ductor.effects.drainer.concurrency}, rounds by
 * one at a time per worker. Ductor's few long-lived loops stay platform threads: the
 * scheduler that beats the heartbeat must never wait for a carrier thread that effects
 * pinned, and the notification listener blocks in a socket read for its whole life.</li>
 * <li><b>One scheduler.</b> One platform thread, {@code ductor-scheduler}, beats the
 * drainer's heartbeat and times the periodic workers. Rounds never run on it: a timer
 * only hands its worker's round to the round executor ({@code ductor-worker-…}), so a
 * slow round never delays the heartbeat beyond its lease.</li>
 * <li><b>One shutdown deadline.</b> When the application context closes, the first of
 * Ductor's components to stop starts one deadline, {@code ductor.shutdown-timeout} long,
 * and every other one stops within what is left of it: however many components stop,
 * Ductor's stop ends within that timeout. A thread still running at the deadline is
 * interrupted. A component stopped on its own (outside a context close) gets a whole
 * timeout.</li>
 * </ul>
 */
public final class DuctorThreads
		implements AutoCloseable, ApplicationListener<ContextClosedEvent>, ApplicationContextAware {

	/** How long Ductor's stop may take, unless configured. */
	public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

	/** How long an idle round thread is kept for the next round. */
	private static final long ROUND_THREAD_KEEP_ALIVE_SECONDS = 60;

	/** How long idle threads, interrupted, are given to end. */
	private static final Duration IDLE_THREAD_END = Duration.ofMillis(100);

	private static final Log logger = LogFactory.getLog(DuctorThreads.class);

	private final boolean virtual;

	private final Duration shutdownTimeout;

	/** Every thread made here that has not ended yet, virtual ones included. */
	private final Set<Thread> live = ConcurrentHashMap.newKeySet();

	private volatile @Nullable ApplicationContext context;

	/** Set when the context starts closing; the deadline starts at the first stop. */
	private volatile boolean closing;

	private long closeDeadline;

	private boolean closeDeadlineStarted;

	private @Nullable ScheduledThreadPoolExecutor scheduler;

	private @Nullable ThreadPoolExecutor rounds;

	/**
	 * @param virtual whether work runs on virtual threads; only on Java 21 or later
	 * @param shutdownTimeout the one deadline for Ductor's stop
	 * @throws IllegalStateException if virtual threads are asked for on a Java that has
	 * none
	 */
	public DuctorThreads(boolean virtual, Duration shutdownTimeout) {
		if (shutdownTimeout.isNegative() || shutdownTimeout.isZero()) {
			throw new IllegalArgumentException("shutdownTimeout must be positive but was " + shutdownTimeout);
		}
		if (virtual && !virtualThreadsSupported()) {
			throw new IllegalStateException("Virtual threads need Java 21 or later; this is Java "
					+ System.getProperty("java.specification.version"));
		}
		this.virtual = virtual;
		this.shutdownTimeout = shutdownTimeout;
	}

	/**
	 * @return platform threads and the default shutdown timeout, for a component used on
	 * its own
	 */
	public static DuctorThreads platform() {
		return new DuctorThreads(false, DEFAULT_SHUTDOWN_TIMEOUT);
	}

	/**
	 * @return whether this Java has virtual threads
	 */
	public static boolean virtualThreadsSupported() {
		return Runtime.version().feature() >= 21;
	}

	/**
	 * @return whether work (effect attempts, worker rounds) runs on virtual threads
	 */
	public boolean virtual() {
		return this.virtual;
	}

	/**
	 * @return the one deadline for Ductor's stop
	 */
	public Duration shutdownTimeout() {
		return this.shutdownTimeout;
	}

	/**
	 * A long-lived platform thread of Ductor's, not started.
	 * @param name its name, after {@code ductor-}
	 * @param task what it runs
	 * @return the thread
	 */
	public Thread newThread(String name, Runnable task) {
		Thread thread = new Thread(tracked(task), "ductor-" + name);
		thread.setDaemon(false);
		this.live.add(thread);
		return thread;
	}

	/**
	 * Platform threads named {@code ductor-<name>-1}, {@code -2}, …
	 * @param name the name of the threads, after {@code ductor-}
	 * @return the factory
	 */
	public ThreadFactory platformThreads(String name) {
		AtomicInteger count = new AtomicInteger();
		return (task) -> newThread(name + "-" + count.incrementAndGet(), task);
	}

	/**
	 * Threads that run work, named {@code ductor-<name>-…}: virtual ones when virtual
	 * threads are on, platform ones otherwise.
	 * @param name the name of the threads, after {@code ductor-}
	 * @return the factory
	 */
	public ThreadFactory workThreads(String name) {
		if (!this.virtual) {
			return platformThreads(name);
		}
		ThreadFactory virtualThreads = new VirtualThreadTaskExecutor("ductor-" + name + "-").getVirtualThreadFactory();
		return (task) -> {
			Thread thread = virtualThreads.newThread(tracked(task));
			this.live.add(thread);
			return thread;
		};
	}

	/**
	 * The workers of one drain session: exactly {@code concurrency} effects run at once,
	 * on virtual threads when they are on; the others queue.
	 * @param concurrency how many effects run at once
	 * @return the executor, which its caller shuts down
	 */
	public ThreadPoolExecutor effectWorkers(int concurrency) {
		ThreadPoolExecutor workers = new ThreadPoolExecutor(concurrency, concurrency, 60, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(), workThreads("effect"));
		// idle workers do not wait for work for ever: a quiet drainer holds no thread
		workers.allowCoreThreadTimeOut(true);
		return workers;
	}

	/**
	 * The scheduler shared by the heartbeat and the periodic workers' timers: one
	 * platform thread. Only short tasks run on it: a beat (one statement) and the timers
	 * that hand rounds to {@link #rounds()}.
	 * @return the scheduler
	 */
	public synchronized ScheduledExecutorService scheduler() {
		if (this.scheduler == null) {
			ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1,
					(task) -> newThread("scheduler", task));
			scheduler.setRemoveOnCancelPolicy(true);
			scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
			scheduler.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
			this.scheduler = scheduler;
		}
		return this.scheduler;
	}

	/**
	 * Where the periodic workers' rounds run: a thread per round that is running (each
	 * worker runs one at a time), kept a minute for the next one.
	 * @return the executor
	 */
	public synchronized ExecutorService rounds() {
		if (this.rounds == null) {
			this.rounds = new ThreadPoolExecutor(0, Integer.MAX_VALUE, ROUND_THREAD_KEEP_ALIVE_SECONDS,
					TimeUnit.SECONDS, new SynchronousQueue<>(), workThreads("worker"));
		}
		return this.rounds;
	}

	/**
	 * The deadline a component that starts stopping now must end by: what is left of the
	 * one deadline when the context is closing (started by the first component to stop),
	 * a whole shutdown timeout otherwise.
	 * @return the deadline
	 */
	public Deadline stopDeadline() {
		if (this.closing) {
			synchronized (this) {
				if (!this.closeDeadlineStarted) {
					this.closeDeadline = System.nanoTime() + this.shutdownTimeout.toNanos();
					this.closeDeadlineStarted = true;
				}
				return new Deadline(this.closeDeadline);
			}
		}
		return new Deadline(System.nanoTime() + this.shutdownTimeout.toNanos());
	}

	/**
	 * @return the threads made here that are still alive, virtual ones included
	 */
	public List<Thread> liveThreads() {
		return this.live.stream().filter(Thread::isAlive).toList();
	}

	@Override
	public void setApplicationContext(ApplicationContext context) {
		this.context = context;
	}

	/** The context closes: its lifecycle stops Ductor's components next. */
	@Override
	public void onApplicationEvent(ContextClosedEvent event) {
		if (this.context == null || event.getApplicationContext() == this.context) {
			this.closing = true;
		}
	}

	/**
	 * Ends the scheduler and the round threads, after every component using them stopped,
	 * within what is left of the deadline.
	 */
	@Override
	public void close() {
		ExecutorService scheduler;
		ExecutorService rounds;
		synchronized (this) {
			scheduler = this.scheduler;
			rounds = this.rounds;
			this.scheduler = null;
			this.rounds = null;
		}
		Deadline deadline = stopDeadline();
		for (ExecutorService executor : new ExecutorService[] { scheduler, rounds }) {
			if (executor != null) {
				executor.shutdown();
				// idle threads end at once when interrupted; only a task still running is
				// worth a warning
				if (!deadline.awaitOrInterrupt(executor) && !awaitQuietly(executor, IDLE_THREAD_END)) {
					logger.warn("Ductor's " + ((executor == scheduler) ? "scheduler" : "worker rounds")
							+ " did not end within the shutdown deadline (" + this.shutdownTimeout
							+ ") and were interrupted");
				}
			}
		}
	}

	private static boolean awaitQuietly(ExecutorService executor, Duration timeout) {
		try {
			return executor.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private Runnable tracked(Runnable task) {
		return () -> {
			try {
				task.run();
			}
			finally {
				this.live.remove(Thread.currentThread());
			}
		};
	}

	/**
	 * When a stop must end, on {@link System#nanoTime()}'s clock.
	 */
	public static final class Deadline {

		private final long nanos;

		Deadline(long nanos) {
			this.nanos = nanos;
		}

		/**
		 * @param nanos when, on {@link System#nanoTime()}'s clock
		 * @return the deadline
		 */
		public static Deadline at(long nanos) {
			return new Deadline(nanos);
		}

		/**
		 * @return the deadline, {@code share} earlier: room kept for what must follow
		 * @param share the time kept back
		 */
		public Deadline earlier(Duration share) {
			return new Deadline(this.nanos - share.toNanos());
		}

		/**
		 * @return how long is left, never negative
		 */
		public Duration remaining() {
			return Duration.ofNanos(Math.max(0, this.nanos - System.nanoTime()));
		}

		/**
		 * @param bound a bound of the caller's own
		 * @return the deadline, or {@code bound} from now when that comes first
		 */
		public Deadline within(Duration bound) {
			return new Deadline(Math.min(this.nanos, System.nanoTime() + bound.toNanos()));
		}

		/**
		 * Waits for {@code thread} to end until the deadline, then interrupts it.
		 * @param thread the thread
		 * @return whether it ended in time
		 */
		public boolean joinOrInterrupt(Thread thread) {
			try {
				long millis = remaining().toMillis();
				// join(0) would wait for ever
				thread.join(Math.max(1, millis));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			if (thread.isAlive()) {
				thread.interrupt();
				return false;
			}
			return true;
		}

		/**
		 * Waits for a shut-down {@code executor} to finish its tasks until the deadline,
		 * then interrupts them.
		 * @param executor the executor, shut down
		 * @return whether it finished in time
		 */
		public boolean awaitOrInterrupt(ExecutorService executor) {
			try {
				if (executor.awaitTermination(remaining().toNanos(), TimeUnit.NANOSECONDS)) {
					return true;
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			executor.shutdownNow();
			return false;
		}

	}

}
