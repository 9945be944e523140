package io.ductor.jdbc.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy for tests that can make the connections it carries go silent: after
 * {@link #silenceOpenConnections()} their bytes are swallowed in both directions and
 * their sockets stay open, as a connection left half-open by a failover or a dropped NAT
 * entry. Connections made afterwards are carried normally.
 */
final class SilencingProxy implements AutoCloseable {

	private final ServerSocket server;

	private final String targetHost;

	private final int targetPort;

	private final List<Pipe> pipes = new CopyOnWriteArrayList<>();

	SilencingProxy(String targetHost, int targetPort) throws IOException {
		this.targetHost = targetHost;
		this.targetPort = targetPort;
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread acceptor = new Thread(this::accept, "silencing-proxy");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	int port() {
		return this.server.getLocalPort();
	}

	/** Swallow every byte of the connections open now, without closing them. */
	void silenceOpenConnections() {
		this.pipes.forEach((pipe) -> pipe.silent = true);
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				Socket target = new Socket(this.targetHost, this.targetPort);
				Pipe pipe = new Pipe(client, target);
				this.pipes.add(pipe);
				pipe.start();
			}
			catch (IOException ex) {
				// closed, or the target refused: the client sees its connection fail
			}
		}
	}

	@Override
	public void close() throws IOException {
		this.server.close();
		for (Pipe pipe : this.pipes) {
			pipe.close();
		}
	}

	private static final class Pipe {

		private final Socket client;

		private final Socket target;

		volatile boolean silent;

		Pipe(Socket client, Socket target) {
			this.client = client;
			this.target = target;
		}

		void start() throws IOException {
			copy(this.client.getInputStream(), this.target.getOutputStream(), "to-server");
			copy(this.target.getInputStream(), this.client.getOutputStream(), "to-client");
		}

		private void copy(InputStream in, OutputStream out, String direction) {
			Thread thread = new Thread(() -> {
				byte[] buffer = new byte[8192];
				try {
					for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
						if (!this.silent) {
							out.write(buffer, 0, n);
							out.flush();
						}
					}
				}
				catch (IOException ex) {
					// one side went away
				}
				if (!this.silent) {
					close();
				}
			}, "silencing-proxy-" + direction);
			thread.setDaemon(true);
			thread.start();
		}

		void close() {
			try {
				this.client.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
			try {
				this.target.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
		}

	}

}
