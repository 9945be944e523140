package io.ductor.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on a fixed local port to a target that can change: the address the Kafka
 * clients know (the broker advertises it), so that the broker behind it can be restarted
 * on another port, and the connections can be dropped and refused for a while.
 */
public final class TcpProxy implements AutoCloseable {

	private final ServerSocket server;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private volatile int targetPort;

	private volatile boolean refusing;

	private volatile boolean muted;

	public TcpProxy() throws IOException {
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread acceptor = new Thread(this::accept, "tcp-proxy-" + port());
		acceptor.setDaemon(true);
		acceptor.start();
	}

	public int port() {
		return this.server.getLocalPort();
	}

	public void target(int port) {
		this.targetPort = port;
	}

	/** Close every connection and refuse new ones until {@link #accepting()}. */
	public void refuse() {
		this.refusing = true;
		dropAll();
	}

	public void accepting() {
		this.refusing = false;
	}

	/**
	 * Pass the clients' requests on but swallow the answers: the broker does the work,
	 * the clients never hear of it.
	 */
	public void mute() {
		this.muted = true;
	}

	/** Answer again, on new connections (the swallowed answers broke the old ones). */
	public void unmute() {
		this.muted = false;
		dropAll();
	}

	public void dropAll() {
		for (Socket socket : this.sockets) {
			closeQuietly(socket);
		}
		this.sockets.clear();
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				if (this.refusing || this.targetPort == 0) {
					closeQuietly(client);
					continue;
				}
				Socket upstream;
				try {
					upstream = new Socket(InetAddress.getLoopbackAddress(), this.targetPort);
				}
				catch (IOException ex) {
					closeQuietly(client);
					continue;
				}
				this.sockets.add(client);
				this.sockets.add(upstream);
				pump(client, upstream, false);
				pump(upstream, client, true);
			}
			catch (IOException ex) {
				// closed
			}
		}
	}

	private void pump(Socket from, Socket to, boolean answers) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					if (!answers || !this.muted) {
						out.write(buffer, 0, read);
						out.flush();
					}
				}
			}
			catch (IOException ex) {
				// dropped
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
				this.sockets.remove(from);
				this.sockets.remove(to);
			}
		}, "tcp-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// closing
		}
	}

	@Override
	public void close() throws IOException {
		this.server.close();
		dropAll();
	}

}
