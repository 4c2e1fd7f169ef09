-- project ts05_aggregate_by_type (id 0b000000-0000-4000-8000-000000000005, version 1) fused over 2026-01, 2026-02, 2026-03
-- Parameters: :run_started_at; each row carries its period in __lf_period_identifier, __lf_period_start, __lf_period_end

-- lf_periods: the periods of the range
SELECT
  *
FROM VALUES
  ('2026-01', CAST('2026-01-01' AS DATE), CAST('2026-01-31' AS DATE)),
  ('2026-02', CAST('2026-02-01' AS DATE), CAST('2026-02-28' AS DATE)),
  ('2026-03', CAST('2026-03-01' AS DATE), CAST('2026-03-31' AS DATE)) AS t(`__lf_period_identifier`, `__lf_period_start`, `__lf_period_end`);

-- lf_stage_1: operations 0, 1, 2
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`,
    `__lf_period_identifier`,
    `__lf_period_start`,
    `__lf_period_end`
  FROM `ds_gl`
), `op_001_join_acct` AS (
  SELECT
    `code` AS `acct__code`,
    `name` AS `acct__name`,
    `type` AS `acct__type`,
    `category` AS `acct__category`,
    `is_active` AS `acct__is_active`,
    `_period` AS `acct___period`,
    COUNT(*) OVER (PARTITION BY `code`, `__lf_period_identifier`) AS `acct___lf_matches`,
    `__lf_period_identifier` AS `acct____lf_period_identifier`
  FROM (
    SELECT /*+ COALESCE(1) */
      `code`,
      `name`,
      `type`,
      `category`,
      `is_active`,
      `_period`,
      `__lf_period_identifier`,
      `__lf_period_start`,
      `__lf_period_end`
    FROM `ds_accounts`
    WHERE
      NOT `_deleted`
  ) AS `join_rows`
), `op_001_update` AS (
  SELECT
    `transactions`.`journal_id`,
    `transactions`.`line_number`,
    `transactions`.`posting_date`,
    `transactions`.`account_code`,
    `transactions`.`cost_center_code`,
    `transactions`.`currency`,
    `transactions`.`amount_local`,
    `transactions`.`amount_reporting`,
    `transactions`.`description`,
    `transactions`.`source_system`,
    `transactions`.`_row_id`,
    `transactions`.`_deleted`,
    CASE
      WHEN NOT `transactions`.`_deleted`
      THEN :run_started_at
      ELSE `transactions`.`_updated_at`
    END AS `_updated_at`,
    `transactions`.`_period`,
    `transactions`.`_labels`,
    `transactions`.`_source_dataset`,
    `transactions`.`_operation_seq`,
    CASE WHEN NOT `transactions`.`_deleted` THEN `acct`.`acct__type` END AS `account_type`,
    `transactions`.`_lf_origin`,
    `transactions`.`_lf_deleted_by`,
    `transactions`.`__lf_period_identifier`,
    `transactions`.`__lf_period_start`,
    `transactions`.`__lf_period_end`
  FROM `input` AS `transactions`
  LEFT JOIN `op_001_join_acct` AS `acct`
    ON (
      `transactions`.`account_code` = `acct`.`acct__code`
      AND NOT `transactions`.`_deleted`
    )
    AND `transactions`.`__lf_period_identifier` = `acct`.`acct____lf_period_identifier`
  WHERE
    (
      COALESCE(`acct`.`acct___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'acct\' of operation 1 matched ',
          CAST(`acct`.`acct___lf_matches` AS STRING),
          ' rows of dataset \'accounts\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`transactions`.`account_code` AS STRING))
        )
      )
    )
), `op_002_summary` AS (
  SELECT
    `account_type`,
    SUM(`amount_local`) AS `total_amount`,
    COUNT(`journal_id`) AS `line_count`,
    `__lf_period_identifier`,
    `__lf_period_start`,
    `__lf_period_end`
  FROM `op_001_update`
  WHERE
    NOT `_deleted`
  GROUP BY
    `account_type`,
    `__lf_period_identifier`,
    `__lf_period_start`,
    `__lf_period_end`
), `op_002_aggregate` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `account_type`,
    CAST(NULL AS DECIMAL(28, 2)) AS `total_amount`,
    CAST(NULL AS BIGINT) AS `line_count`,
    `_lf_origin`,
    `_lf_deleted_by`,
    `__lf_period_identifier`,
    `__lf_period_start`,
    `__lf_period_end`
  FROM `op_001_update`
  UNION ALL
  SELECT
    CAST(NULL AS STRING) AS `journal_id`,
    CAST(NULL AS INT) AS `line_number`,
    CAST(NULL AS DATE) AS `posting_date`,
    CAST(NULL AS STRING) AS `account_code`,
    CAST(NULL AS STRING) AS `cost_center_code`,
    CAST(NULL AS STRING) AS `currency`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount_local`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount_reporting`,
    CAST(NULL AS STRING) AS `description`,
    CAST(NULL AS STRING) AS `source_system`,
    CONCAT(
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        1,
        8
      ),
      '-',
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        9,
        4
      ),
      '-7',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `account_type` AS k1)), 256), 1, 3),
      '-8',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `account_type` AS k1)), 256), 4, 3),
      '-',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `account_type` AS k1)), 256), 7, 12)
    ) AS `_row_id`,
    FALSE AS `_deleted`,
    :run_started_at AS `_updated_at`,
    `__lf_period_identifier` AS `_period`,
    '' AS `_labels`,
    '0a000000-0000-4000-8000-000000000001' AS `_source_dataset`,
    2 AS `_operation_seq`,
    CAST(`account_type` AS STRING) AS `account_type`,
    `total_amount`,
    `line_count`,
    2 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`,
    `__lf_period_identifier`,
    `__lf_period_start`,
    `__lf_period_end`
  FROM `op_002_summary`
)
SELECT
  *
FROM `op_002_aggregate`;

-- output_003: operations 3
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`,
  `account_type`,
  `total_amount`,
  `line_count`,
  `__lf_period_identifier`,
  `__lf_period_start`,
  `__lf_period_end`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

