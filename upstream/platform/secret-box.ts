import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** A ciphertext at rest: AES-256-GCM with a 96-bit random IV and the 128-bit auth tag (NIST SP 800-38D). */
export interface SealedSecret {
  iv: string;
  tag: string;
  ciphertext: string;
}

/**
 * Encrypts provider credentials at rest. The key comes from `CPZ_PLATFORM_ENCRYPTION_KEY`
 * (64 hex chars) or is generated per process, which is enough for an in-memory store.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(hexKey = process.env.CPZ_PLATFORM_ENCRYPTION_KEY) {
    this.key = hexKey && /^[0-9a-f]{64}$/i.test(hexKey) ? Buffer.from(hexKey, 'hex') : randomBytes(32);
  }

  seal(plaintext: string, associatedData: string): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64') };
  }

  /** Throws when the ciphertext, tag or associated data was tampered with. */
  open(sealed: SealedSecret, associatedData: string): string {
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
  }
}
