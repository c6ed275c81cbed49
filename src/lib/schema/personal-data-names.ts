/**
 * Property names that look like personal data, for `bq schema gdpr --require`. A name matches
 * when one of its words, or a run of consecutive words, is on the list: `email`,
 * `customer_email`, `billingAddress`, `ip_address`, `date_of_birth`. Words are split at `_`, `-`,
 * `.`, spaces and camelCase humps, and compared in lower case. `name` alone is too common
 * (`queue_name`, `product_name`), so it matches only the whole property name `name`.
 *
 * A registry extends the list, or takes names off it, in registry.json:
 *   "gdpr": {"personal_data_names": ["tckn", "loyalty_id"], "not_personal_data_names": ["card"]}
 * A property reviewed as not personal is annotated `"x-gdpr-sensitive": false`.
 */
export const PERSONAL_DATA_NAMES = [
  'email', 'e_mail', 'phone', 'phone_number', 'mobile', 'msisdn', 'fax',
  'first_name', 'last_name', 'full_name', 'middle_name', 'given_name', 'family_name', 'surname', 'maiden_name', 'display_name', 'username',
  'address', 'street', 'street_address', 'address_line', 'postcode', 'post_code', 'postal_code', 'zip', 'zipcode', 'zip_code', 'city_of_birth',
  'ip', 'ip_address', 'ipv4', 'ipv6', 'mac_address', 'device_id', 'geo', 'latitude', 'longitude', 'gps',
  'birth', 'birthdate', 'birth_date', 'birthday', 'date_of_birth', 'dob', 'age',
  'ssn', 'social_security', 'national_id', 'national_insurance', 'tax_id', 'tin', 'tckn', 'nin', 'passport', 'passport_number', 'driver_license', 'drivers_license', 'licence_number',
  'iban', 'bic', 'account_number', 'bank_account', 'card', 'card_number', 'credit_card', 'pan', 'cvv', 'cvc',
  'gender', 'religion', 'ethnicity', 'health', 'diagnosis', 'biometric', 'fingerprint', 'face_id',
] as const

/** Names that match only as the whole property name. */
export const WHOLE_NAME_ONLY = ['name'] as const

export interface PersonalNameRules {
  /** Extra names from the registry (matched like the built-in ones). */
  extra?: string[]
  /** Built-in names the registry takes off the list. */
  removed?: string[]
}

export class PersonalNameMatcher {
  private readonly words: Set<string>
  private readonly whole: Set<string>

  constructor(rules: PersonalNameRules = {}) {
    const removed = new Set((rules.removed ?? []).map(normalize))
    this.words = new Set([...PERSONAL_DATA_NAMES, ...(rules.extra ?? [])].map(normalize).filter((n) => !removed.has(n)))
    this.whole = new Set(WHOLE_NAME_ONLY.map(normalize).filter((n) => !removed.has(n)))
  }

  /** The listed name a property name matches, or undefined. */
  match(property: string): string | undefined {
    const words = splitWords(property)
    if (words.length === 0) return undefined
    const all = words.join('_')
    if (this.whole.has(all)) return all
    for (let length = words.length; length >= 1; length--) {
      for (let start = 0; start + length <= words.length; start++) {
        const run = words.slice(start, start + length).join('_')
        if (this.words.has(run)) return run
      }
    }
    return undefined
  }
}

function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase())
}

const normalize = (name: string) => splitWords(name).join('_')
