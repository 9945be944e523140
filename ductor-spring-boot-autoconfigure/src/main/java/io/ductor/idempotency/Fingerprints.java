package io.ductor.idempotency;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Request fingerprints: SHA-256 over the parts that make a request what it is.
 */
public final class Fingerprints {

	private Fingerprints() {
	}

	/**
	 * @param parts the request's parts (method, path, body, ...), each length-prefixed so
	 * that moving bytes from one part to the next changes the fingerprint
	 * @return the lower-case hex SHA-256 of the parts
	 */
	public static String sha256(byte[]... parts) {
		Builder builder = builder();
		for (byte[] part : parts) {
			builder.part(part);
		}
		return builder.sha256();
	}

	/**
	 * @param parts the request's parts, as text (encoded as UTF-8)
	 * @return the lower-case hex SHA-256 of the parts
	 */
	public static String sha256(String... parts) {
		byte[][] bytes = new byte[parts.length][];
		for (int i = 0; i < parts.length; i++) {
			bytes[i] = parts[i].getBytes(StandardCharsets.UTF_8);
		}
		return sha256(bytes);
	}

	/**
	 * @return a builder that adds parts one at a time, for parts too large to hold in
	 * memory together; the same parts give the same fingerprint as
	 * {@link #sha256(byte[]...)}
	 */
	public static Builder builder() {
		return new Builder();
	}

	/** Adds length-prefixed parts to a SHA-256 digest, one at a time. */
	public static final class Builder {

		private final MessageDigest digest;

		private Builder() {
			try {
				this.digest = MessageDigest.getInstance("SHA-256");
			}
			catch (NoSuchAlgorithmException ex) {
				throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
			}
		}

		/**
		 * @param part the next part
		 * @return this builder
		 */
		public Builder part(byte[] part) {
			prefix(part.length);
			this.digest.update(part);
			return this;
		}

		/**
		 * @param part the next part, as text (encoded as UTF-8)
		 * @return this builder
		 */
		public Builder part(String part) {
			return part(part.getBytes(StandardCharsets.UTF_8));
		}

		/**
		 * Digests a part as it is read, without holding it in memory.
		 * @param part the next part's bytes
		 * @param length how many bytes the part has
		 * @return this builder
		 * @throws IOException when the stream fails or holds more or fewer than
		 * {@code length} bytes
		 */
		public Builder part(InputStream part, long length) throws IOException {
			prefix(length);
			byte[] buffer = new byte[8192];
			long read = 0;
			for (int n = part.read(buffer); n != -1; n = part.read(buffer)) {
				read += n;
				if (read > length) {
					break;
				}
				this.digest.update(buffer, 0, n);
			}
			if (read != length) {
				throw new IOException(
						"a part declared to have " + length + " bytes had " + ((read > length) ? "more" : read));
			}
			return this;
		}

		/**
		 * @return the lower-case hex SHA-256 of the parts added
		 */
		public String sha256() {
			return HexFormat.of().formatHex(this.digest.digest());
		}

		private void prefix(long length) {
			this.digest.update(Long.toString(length).getBytes(StandardCharsets.US_ASCII));
			this.digest.update((byte) ':');
		}

	}

}
